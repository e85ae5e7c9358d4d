package state

import (
	"bytes"
	"compress/flate"
	"io"
	"slices"

	"github.com/rackform/rackform/executor"
)

// memBlockSize is how many bytes of records a journal block holds before
// it is compressed: large enough for flate to find the repetition of
// records (field names, addresses, ops), small enough that a scan holds
// little at once.
const memBlockSize = 256 << 10

// memJournal is one plan's journal held in memory: records one per line
// as Dir writes them, in blocks, every full block compressed with flate.
// A rehearsal of 100,000 servers writes about 300 MB of records; held so
// they take a tenth of it.
type memJournal struct {
	// sealed are the full blocks, compressed, in order.
	sealed []memBlock
	// open is the block being filled: records, each ended by a newline.
	open []byte
	// openStart is the position before open's first record.
	openStart int64
	// end is the position after the last record.
	end int64
}

// memBlock is a compressed block and the position before its first
// record and after its last.
type memBlock struct {
	start, end int64
	data       []byte
}

// append adds one record and returns its position: the byte offset past
// its newline, as in a journal file.
func (j *memJournal) append(r []byte) int64 {
	j.open = append(append(j.open, r...), '\n')
	j.end += int64(len(r)) + 1
	if len(j.open) >= memBlockSize {
		j.seal()
	}
	return j.end
}

func (j *memJournal) seal() {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err == nil {
		_, err = w.Write(j.open)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		// Writing to memory cannot fail; keep the block open if it did.
		return
	}
	j.sealed = append(j.sealed, memBlock{start: j.openStart, end: j.end, data: slices.Clip(buf.Bytes())})
	j.open, j.openStart = j.open[:0], j.end
}

// snapshot is what a scan of the records after position after reads:
// the sealed blocks (never changed once sealed) and a copy of the open
// block's records past after (positions are byte offsets, so they are
// its tail), so that appends may go on meanwhile.
func (j *memJournal) snapshot(after int64) memJournal {
	tail, start := j.open, j.openStart
	if k := after - j.openStart; k > 0 && k <= int64(len(tail)) {
		tail, start = tail[k:], after
	}
	return memJournal{sealed: slices.Clip(j.sealed), open: bytes.Clone(tail), openStart: start, end: j.end}
}

// scan calls fn with each record after position after, in order.
func (j *memJournal) scan(after int64, fn func(executor.Entry) error) error {
	var raw bytes.Buffer
	for _, b := range j.sealed {
		if b.end <= after {
			continue
		}
		raw.Reset()
		if _, err := io.Copy(&raw, flate.NewReader(bytes.NewReader(b.data))); err != nil {
			return err
		}
		if err := scanLines(raw.Bytes(), b.start, after, fn); err != nil {
			return err
		}
	}
	return scanLines(j.open, j.openStart, after, fn)
}

// scanLines calls fn with each line of block past after; start is the
// position before the block's first line. A last line without its newline
// is left out.
func scanLines(block []byte, start, after int64, fn func(executor.Entry) error) error {
	pos := start
	for {
		i := bytes.IndexByte(block, '\n')
		if i < 0 {
			return nil
		}
		line := block[:i]
		block = block[i+1:]
		pos += int64(i) + 1
		if pos <= after {
			continue
		}
		if err := fn(executor.Entry{Pos: pos, Data: line}); err != nil {
			return err
		}
	}
}
