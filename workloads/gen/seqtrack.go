package gen

// SeqTracker remembers which (stream, seq) pairs were seen, to count
// duplicates. One bit per sequence number, in 64-bit words allocated on
// demand. Not safe for concurrent use.
type SeqTracker struct {
	words map[streamWord]uint64
	seen  int64
	dups  int64
}

type streamWord struct {
	stream uint32
	word   uint64
}

// NewSeqTracker returns an empty tracker.
func NewSeqTracker() *SeqTracker { return &SeqTracker{words: map[streamWord]uint64{}} }

// Observe records one delivery and reports whether it is a duplicate.
func (t *SeqTracker) Observe(stream uint32, seq uint64) (dup bool) {
	k := streamWord{stream, seq / 64}
	bit := uint64(1) << (seq % 64)
	w := t.words[k]
	if w&bit != 0 {
		t.dups++
		return true
	}
	t.words[k] = w | bit
	t.seen++
	return false
}

// Unique is the number of distinct messages seen; Duplicates the redeliveries.
func (t *SeqTracker) Unique() int64     { return t.seen }
func (t *SeqTracker) Duplicates() int64 { return t.dups }
