// Command client is the workload of the jetstream worlds. It creates a
// stream with file storage, publishes distinct messages with js.Publish,
// which waits for the server's PubAck, and remembers the sequence each
// acknowledged message got. The server is crashed and restarted meanwhile.
// Then it reads every acknowledged message back by its sequence and exits 1
// if one is missing or different: a PubAck promises the message is stored.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const stream = "EVENTS"

func main() {
	url := flag.String("url", "nats://server:4222", "NATS server URL")
	msgs := flag.Int("msgs", 150, "messages to publish (0: only create the stream)")
	pause := flag.Duration("pause", 40*time.Millisecond, "pause between publishes, so that crashes land among them")
	opTimeout := flag.Duration("op-timeout", 2*time.Second, "how long to wait for one PubAck")
	readBudget := flag.Duration("read-timeout", 10*time.Second, "how long to keep retrying one read in the check phase")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")

	nc, err := nats.Connect(*url,
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond),
		nats.Timeout(time.Second),
	)
	if err != nil {
		log.Fatalf("FAIL: connect %s: %v", *url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatalf("FAIL: %v", err)
	}

	// The stream: the one on the server's disk, or a new one. (Updating an
	// existing stream would rewrite its metadata file, which this workload
	// leaves alone.)
	cfg := jetstream.StreamConfig{Name: stream, Subjects: []string{"events.>"}, Storage: jetstream.FileStorage}
	created := retry(30*time.Second, func(ctx context.Context) error {
		_, err := js.Stream(ctx, stream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			_, err = js.CreateStream(ctx, cfg)
		}
		return err
	})
	if created != nil {
		log.Fatalf("FAIL: could not create stream %s in 30s: %v", stream, created)
	}

	if *msgs == 0 {
		fmt.Printf("stream %s created\n", stream)
		return
	}

	// Publish phase. A publish without a PubAck may or may not be stored,
	// so it is neither counted nor checked.
	type ack struct {
		i    int
		data string
	}
	acked := map[uint64]ack{}
	var order []uint64
	unknown := 0
	for i := 1; i <= *msgs; i++ {
		data := fmt.Sprintf("msg-%d", i)
		ctx, cancel := context.WithTimeout(context.Background(), *opTimeout)
		pa, err := js.Publish(ctx, "events.test", []byte(data))
		cancel()
		if err != nil {
			unknown++
			if unknown <= 5 {
				log.Printf("publish %s: unknown outcome: %v", data, err)
			}
			if errors.Is(err, jetstream.ErrNoStreamResponse) {
				// Nothing stores events.test: has the stream gone?
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_, err := js.Stream(ctx, stream)
				cancel()
				if errors.Is(err, jetstream.ErrStreamNotFound) {
					log.Printf("FAIL: stream %s, whose creation the server acknowledged, is gone after a restart, "+
						"with the %d messages acknowledged in it", stream, len(acked))
					os.Exit(1)
				}
			}
		} else {
			if prev, ok := acked[pa.Sequence]; ok {
				log.Printf("FAIL: %s was acknowledged with sequence %d, which %s had been acknowledged with: "+
					"the stream lost acknowledged messages and reused their sequences", data, pa.Sequence, prev.data)
				os.Exit(1)
			}
			acked[pa.Sequence] = ack{i, data}
			order = append(order, pa.Sequence)
		}
		time.Sleep(*pause)
	}
	if len(acked) == 0 {
		log.Fatalf("FAIL: none of %d publishes was acknowledged, so nothing could be checked", *msgs)
	}

	// Check phase: every acknowledged message must be in the stream at the
	// sequence its PubAck named.
	lost := 0
	for _, seq := range order {
		want := acked[seq]
		var got *jetstream.RawStreamMsg
		err := retry(*readBudget, func(ctx context.Context) error {
			s, err := js.Stream(ctx, stream)
			if err != nil {
				return err
			}
			got, err = s.GetMsg(ctx, seq)
			return err
		})
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			lost++
			log.Printf("lost acknowledged message %s (PubAck sequence %d): message not found", want.data, seq)
		case errors.Is(err, jetstream.ErrStreamNotFound):
			log.Printf("FAIL: stream %s, whose creation the server acknowledged, is gone, with all %d acknowledged messages", stream, len(acked))
			os.Exit(1)
		case err != nil:
			log.Fatalf("FAIL: could not read sequence %d back: %v", seq, err)
		case string(got.Data) != want.data:
			lost++
			log.Printf("lost acknowledged message %s (PubAck sequence %d): sequence %d holds %q", want.data, seq, seq, got.Data)
		}
	}
	if lost > 0 {
		log.Printf("FAIL: %d of %d acknowledged messages lost", lost, len(acked))
		os.Exit(1)
	}
	fmt.Printf("ok: %d of %d publishes acknowledged, %d with unknown outcome, all %d read back by sequence\n",
		len(acked), *msgs, unknown, len(acked))
}

// retry calls f until it succeeds, the server says the message does not
// exist, or the budget has passed; each call gets a second. A stream that
// is not found is retried: a restarting server may not have recovered it
// yet.
func retry(budget time.Duration, f func(ctx context.Context) error) error {
	end := time.Now().Add(budget)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := f(ctx)
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrMsgNotFound) || !time.Now().Before(end) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
