package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// ackWriter appends ack lines to a file from one goroutine, fdatasyncing
// after every batch it drains, so a line on disk is an acknowledgement that
// really happened.
type ackWriter struct {
	f    *os.File
	ch   chan string
	done chan error
}

func newAckWriter(path string) (*ackWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	w := &ackWriter{f: f, ch: make(chan string, 4096), done: make(chan error, 1)}
	go w.loop()
	return w, nil
}

func (w *ackWriter) loop() {
	bw := bufio.NewWriterSize(w.f, 64<<10)
	var err error
	for line := range w.ch {
		bw.WriteString(line)
	drain:
		for {
			select {
			case l, ok := <-w.ch:
				if !ok {
					break drain
				}
				bw.WriteString(l)
			default:
				break drain
			}
		}
		if e := bw.Flush(); e != nil && err == nil {
			err = e
		}
		if e := w.f.Sync(); e != nil && err == nil {
			err = e
		}
	}
	if e := bw.Flush(); e != nil && err == nil {
		err = e
	}
	if e := w.f.Sync(); e != nil && err == nil {
		err = e
	}
	if e := w.f.Close(); e != nil && err == nil {
		err = e
	}
	w.done <- err
}

func (w *ackWriter) close() error {
	close(w.ch)
	return <-w.done
}

// runProduce sends messages from -conc goroutines until SIGTERM/SIGINT or
// -duration, logging every SUCCESS.
func runProduce(args []string) error {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	addr := fs.String("addr", "", "broker address (127.0.0.1:port)")
	ackPath := fs.String("acks", "", "acknowledgement log to append to")
	topic := fs.String("topic", "CRASH", "topic")
	queues := fs.Int("queues", 4, "queues of the topic")
	conc := fs.Int("conc", 4, "concurrent producers")
	maxBody := fs.Int("size", 2048, "maximum body size (bodies are 16..size bytes)")
	cycle := fs.Int("cycle", 0, "cycle number written into each ack")
	flushKind := fs.String("flush", "group", "the broker's flush policy (written into each ack)")
	duration := fs.Duration("duration", 2*time.Minute, "stop after this long at the latest")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "random seed")
	fs.Parse(args)
	if *addr == "" || *ackPath == "" {
		return errors.New("produce: -addr and -acks are required")
	}
	cl := newClient()
	defer cl.Close()
	if err := createTopic(cl, *addr, *topic, *queues); err != nil {
		return err
	}
	w, err := newAckWriter(*ackPath)
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		select {
		case <-sig:
		case <-time.After(*duration):
		}
		close(stop)
	}()
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var acked, refused, failed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < *conc; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(*seed, uint64(g)))
			for i := 0; !stopped(); i++ {
				seq := fmt.Sprintf("c%d-g%d-%d", *cycle, g, i)
				body := make([]byte, 16+rng.IntN(max(1, *maxBody-15)))
				for j := range body {
					body[j] = byte(rng.Uint32())
				}
				uniq := record.NewUniqID()
				h := protocol.SendMessageHeader{
					ProducerGroup: "crashcheck", Topic: *topic, DefaultTopic: protocol.DefaultTopic,
					DefaultTopicQueueNums: int32(*queues), QueueID: int32(rng.IntN(*queues)),
					BornTimestamp: time.Now().UnixMilli(),
					Properties: record.EncodeProperties(map[string]string{
						record.PropertyUniqKey: uniq, "SEQ": seq, record.PropertyKeys: seq,
					}),
				}
				resp, err := call(cl, *addr, 5*time.Second, protocol.ReqSendMessageV2, h.ExtFields(true), body)
				if err != nil {
					failed.Add(1)
					cl.CloseConn(*addr)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if resp.Code != protocol.RespSuccess {
					refused.Add(1)
					continue
				}
				q, err1 := resp.ExtFields.Int32("queueId")
				off, err2 := resp.ExtFields.Int64("queueOffset")
				if err1 != nil || err2 != nil {
					fmt.Fprintf(os.Stderr, "produce: SUCCESS without queueId/queueOffset: %v\n", resp.ExtFields)
					refused.Add(1)
					continue
				}
				w.ch <- ack{cycle: *cycle, flush: *flushKind, topic: *topic, queueID: q, offset: off,
					bodySHA: bodySHA(body), uniq: uniq, seq: seq}.line()
				acked.Add(1)
			}
		}(g)
	}
	wg.Wait()
	werr := w.close()
	fmt.Fprintf(os.Stderr, "produce: cycle=%d acked=%d refused=%d failed=%d\n", *cycle, acked.Load(), refused.Load(), failed.Load())
	if werr != nil {
		return fmt.Errorf("produce: ack log: %w", werr)
	}
	return nil
}
