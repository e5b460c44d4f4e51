package gen

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/randvar"
)

// MessageConfig chooses each message's shape.
type MessageConfig struct {
	Seed     uint64      // same seed, same messages
	StreamID uint32      // written into every header
	Size     randvar.Var // body bytes (fixed:1024); below workloads.HeaderSize: rounded up
	Topics   []string    // (["bench"])
	Topic    randvar.Var // index into Topics, modulo its length (fixed:0)
	Queue    randvar.Var // queue id (fixed:0); values wrap into int32
	Key      randvar.Var // unset: no key; else "k<value>"
	Tag      randvar.Var // unset: no tag; else "t<value>"
}

// DefaultMessageConfig is 1 KiB bodies to queue 0 of topic "bench", no keys
// or tags, seed 1.
func DefaultMessageConfig() MessageConfig {
	return MessageConfig{
		Seed:   1,
		Size:   randvar.NewVar(randvar.Fixed(1024)),
		Topics: []string{"bench"},
		Topic:  randvar.NewVar(randvar.Fixed(0)),
		Queue:  randvar.NewVar(randvar.Fixed(0)),
	}
}

// ErrConfig marks invalid generator configs.
var ErrConfig = errors.New("gen: invalid config")

// fillerBytes is the length of the seeded random block bodies are cut from.
const fillerBytes = 64 << 10

// Factory builds messages by sequence number.
type Factory struct {
	cfg    MessageConfig
	filler []byte
}

// NewFactory validates cfg (unset Size/Topic/Queue take the defaults).
func NewFactory(cfg MessageConfig) (*Factory, error) {
	def := DefaultMessageConfig()
	if cfg.Size.IsZero() {
		cfg.Size = def.Size
	}
	if len(cfg.Topics) == 0 {
		cfg.Topics = def.Topics
	}
	for _, t := range cfg.Topics {
		if t == "" {
			return nil, fmt.Errorf("%w: empty topic name", ErrConfig)
		}
	}
	if cfg.Topic.IsZero() {
		cfg.Topic = def.Topic
	}
	if cfg.Queue.IsZero() {
		cfg.Queue = def.Queue
	}
	f := &Factory{cfg: cfg, filler: make([]byte, fillerBytes)}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6a09e667f3bcc909))
	for i := 0; i < len(f.filler); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8; j++ {
			f.filler[i+j] = byte(v >> (8 * j))
		}
	}
	return f, nil
}

// Config returns the resolved config.
func (f *Factory) Config() MessageConfig { return f.cfg }

// Builder builds messages; one per goroutine.
type Builder struct {
	f   *Factory
	pcg *rand.PCG
	rng *rand.Rand
}

// NewBuilder returns a Builder (not safe for concurrent use).
func (f *Factory) NewBuilder() *Builder {
	p := rand.NewPCG(0, 0)
	return &Builder{f: f, pcg: p, rng: rand.New(p)}
}

// mix64 is the splitmix64 finaliser: neighbouring seqs get unrelated seeds.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (b *Builder) draw(v randvar.Var, seq uint64) uint64 {
	if ix, ok := v.Dist().(randvar.Indexed); ok {
		return ix.At(seq)
	}
	return v.Uint64(b.rng)
}

// Message builds message seq: shape and filler are a pure function of
// (Seed, seq); the header carries seq and StreamID, and Stamp fills in the
// send times.
func (b *Builder) Message(seq uint64) *workloads.Message {
	c := &b.f.cfg
	b.pcg.Seed(c.Seed, mix64(seq))
	size := b.draw(c.Size, seq)
	if size < workloads.HeaderSize {
		size = workloads.HeaderSize
	}
	m := &workloads.Message{
		Topic:   c.Topics[b.draw(c.Topic, seq)%uint64(len(c.Topics))],
		QueueID: int32(b.draw(c.Queue, seq)),
	}
	if !c.Key.IsZero() {
		m.Keys = "k" + strconv.FormatUint(b.draw(c.Key, seq), 10)
	}
	if !c.Tag.IsZero() {
		m.Tags = "t" + strconv.FormatUint(b.draw(c.Tag, seq), 10)
	}
	body := make([]byte, size)
	workloads.EncodeHeader(body, workloads.Header{Seq: seq, Stream: c.StreamID})
	off := b.rng.IntN(len(b.f.filler))
	for p := workloads.HeaderSize; p < len(body); {
		n := copy(body[p:], b.f.filler[off:])
		p, off = p+n, 0
	}
	m.Body = body
	return m
}

// Route is the (topic, queue) of message seq, without building its body.
func (b *Builder) Route(seq uint64) workloads.QueueRef {
	c := &b.f.cfg
	b.pcg.Seed(c.Seed, mix64(seq))
	b.draw(c.Size, seq)
	return workloads.QueueRef{
		Topic:   c.Topics[b.draw(c.Topic, seq)%uint64(len(c.Topics))],
		QueueID: int32(b.draw(c.Queue, seq)),
	}
}

// Stamp writes the born time and the send delay into a built body, just
// before Send.
func Stamp(body []byte, born time.Time, delay time.Duration) {
	h, _ := workloads.DecodeHeader(body)
	h.Born, h.DelayUs = born.UnixNano(), workloads.DelayMicros(delay)
	workloads.EncodeHeader(body, h)
}

// stampIntended stamps a message intended at intended (in the run's clock,
// see Env.at) and sent delay later, so that the header's Intended() is
// exactly intended: the born time is intended plus the delay in the
// header's whole microseconds, at most 1 µs before the actual send. A
// consumer then classifies the message as warm-up or measured exactly as
// the producer did, even one intended at the very end of warm-up (Stamp's
// born time minus the truncated delay lands up to 1 µs after the intended
// time). A delay past the header's range is stamped at intended+delay.
func stampIntended(body []byte, intended time.Time, delay time.Duration) {
	us := workloads.DelayMicros(delay)
	born := intended.Add(delay)
	if us < math.MaxUint32 {
		born = intended.Add(time.Duration(us) * time.Microsecond)
	}
	Stamp(body, born, time.Duration(us)*time.Microsecond)
}
