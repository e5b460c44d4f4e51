package clients_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/clients"
)

type tagsFilter int64

func (f tagsFilter) MatchTagsCode(c int64) bool { return int64(f) == c }

var errBad = errors.New("bad expression")

func compile(expr, typ string) (clients.Filter, error) {
	switch expr {
	case "*":
		return nil, nil
	case "bad":
		return nil, errBad
	}
	return tagsFilter(len(expr)), nil
}

func heartbeat(id string, groups ...string) *clients.HeartbeatData {
	hb := &clients.HeartbeatData{ClientID: id}
	for _, g := range groups {
		hb.ConsumerDataSet = append(hb.ConsumerDataSet, clients.ConsumerData{GroupName: g, MessageModel: clients.Clustering,
			SubscriptionDataSet: []clients.SubscriptionData{{Topic: "T", SubString: "abc"}, {Topic: "U", SubString: "bad"}}})
	}
	return hb
}

// A heartbeat is authoritative for its client: groups it stops listing are
// left, and each change is reported once; subscriptions keep their
// compiled filter or the compiler's error; an expired client is dropped.
func TestTableMembership(t *testing.T) {
	s := clients.New(clients.Deps{CompileFilter: compile})
	now := time.Now()
	if changed := s.Heartbeat(nil, heartbeat("c1", "g1", "g2"), now); !slices.Equal(sorted(changed), []string{"g1", "g2"}) {
		t.Fatalf("first heartbeat changed %v", changed)
	}
	if changed := s.Heartbeat(nil, heartbeat("c2", "g1"), now); !slices.Equal(changed, []string{"g1"}) {
		t.Fatalf("second client changed %v", changed)
	}
	if changed := s.Heartbeat(nil, heartbeat("c1", "g1"), now.Add(time.Minute)); !slices.Equal(changed, []string{"g2"}) {
		t.Fatalf("c1 leaving g2 changed %v", changed)
	}
	if m := s.Members("g1"); !slices.Equal(m, []string{"c1", "c2"}) {
		t.Fatalf("g1 members %v", m)
	}
	if g := s.ConsumerGroupNames(); !slices.Equal(g, []string{"g1"}) {
		t.Fatalf("groups %v", g)
	}
	sub := s.Subscription("g1", "T")
	if sub == nil || sub.ExpressionType != clients.ExpressionTag || sub.Filter != tagsFilter(3) || sub.FilterErr != nil {
		t.Fatalf("subscription %+v", sub)
	}
	if sub := s.Subscription("g1", "U"); sub == nil || !errors.Is(sub.FilterErr, errBad) {
		t.Fatalf("subscription with a bad expression %+v", sub)
	}
	changed, _ := s.Expire(now.Add(30 * time.Second)) // c2 is older
	if !slices.Equal(changed, []string{"g1"}) || !slices.Equal(s.Members("g1"), []string{"c1"}) {
		t.Fatalf("expire changed %v, members %v", changed, s.Members("g1"))
	}
	if changed := s.Unregister("c1", "", "g1"); !slices.Equal(changed, []string{"g1"}) || len(s.ConsumerGroupNames()) != 0 {
		t.Fatalf("unregister changed %v, groups %v", changed, s.ConsumerGroupNames())
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }
