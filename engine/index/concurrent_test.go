package index

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// One dispatcher puts (rolling through many files) while queriers read;
// every offset a query returns must belong to a key with the queried key's
// hash (collisions are legitimate results, so offsets are checked by hash).
func TestConcurrentPutQuery(t *testing.T) {
	const total, keys = 2000, 10
	s := openService(t, t.TempDir(), Config{MaxHashSlots: 32, MaxIndexNum: 128, MaxQueryNum: 64})
	hashOf := make([]int32, keys)
	for k := range keys {
		hashOf[k] = keyHash("T", fmt.Sprintf("key%d", k))
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := int64(0); i < total; i++ {
			if err := s.Put("T", []string{fmt.Sprintf("key%d", i%keys)}, i, t0+i*10); err != nil {
				errc <- err
				return
			}
		}
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := 0; !done.Load() || q < 10; q++ {
				k := q % keys
				offs, _, _, err := s.Query("T", fmt.Sprintf("key%d", k), 64, 0, t0+total*10)
				if err != nil {
					errc <- err
					return
				}
				for _, off := range offs {
					if off < 0 || off >= total || hashOf[off%keys] != hashOf[k] {
						errc <- fmt.Errorf("query key%d returned offset %d", k, off)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	offs := mustQuery(t, s, "T", "key3", 64, 0, t0+total*10)
	if len(offs) != 64 || offs[0] != total-7 {
		t.Fatalf("final query = %d offsets, first %v", len(offs), offs[:1])
	}
}
