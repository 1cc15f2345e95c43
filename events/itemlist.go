package events

import (
	"encoding/json"
	"iter"
	"slices"
)

// itemChunkLen is how many items a chunk of an ItemList holds; the last
// may hold fewer.
const itemChunkLen = 32

// ItemList is a run's items in the order they started. It is persistent: a
// changed list shares with the one it came from every chunk of 32 items the
// change leaves alone, so an item's start or end in a fold copies one chunk
// and the chunks' index, not the run's every item. The zero value is empty.
// It encodes as a JSON array of ItemRef.
type ItemList struct {
	chunks [][]ItemRef // never written after a list holds them
	n      int
}

// ItemsOf returns a list of items.
func ItemsOf(items ...ItemRef) ItemList {
	if len(items) == 0 {
		return ItemList{}
	}
	l := ItemList{chunks: make([][]ItemRef, 0, (len(items)+itemChunkLen-1)/itemChunkLen), n: len(items)}
	for len(items) > 0 {
		c := slices.Clone(items[:min(itemChunkLen, len(items))])
		items = items[len(c):]
		l.chunks = append(l.chunks, c)
	}
	return l
}

// Len returns the number of items.
func (l ItemList) Len() int { return l.n }

// IsZero reports whether the list is empty (json's omitzero).
func (l ItemList) IsZero() bool { return l.n == 0 }

// At returns item i, 0 ≤ i < Len.
func (l ItemList) At(i int) ItemRef {
	if i < 0 || i >= l.n {
		panic("events: ItemList index out of range")
	}
	return l.chunks[i/itemChunkLen][i%itemChunkLen]
}

// All yields the items in the order they started.
func (l ItemList) All() iter.Seq[ItemRef] {
	return func(yield func(ItemRef) bool) {
		for i := range l.n {
			if !yield(l.chunks[i/itemChunkLen][i%itemChunkLen]) {
				return
			}
		}
	}
}

// Slice returns the items as a new slice.
func (l ItemList) Slice() []ItemRef {
	out := make([]ItemRef, 0, l.n)
	for it := range l.All() {
		out = append(out, it)
	}
	return out
}

// index returns the index of the item with id, searching from the latest
// (the item an event is of is most often among the latest), or -1.
func (l ItemList) index(id string) int {
	if id == "" {
		return -1
	}
	// Ids of one run share a long prefix (they begin with a time): their
	// last bytes tell most of them apart without comparing the rest.
	last := id[len(id)-1]
	for i := l.n - 1; i >= 0; i-- {
		x := l.chunks[i/itemChunkLen][i%itemChunkLen].ID
		if len(x) == len(id) && x[len(x)-1] == last && x == id {
			return i
		}
	}
	return -1
}

// with returns l with item i replaced by it: a copy of its chunk and of
// the chunks' index.
func (l ItemList) with(i int, it ItemRef) ItemList {
	c := i / itemChunkLen
	chunk := slices.Clone(l.chunks[c])
	chunk[i%itemChunkLen] = it
	chunks := slices.Clone(l.chunks)
	chunks[c] = chunk
	return ItemList{chunks: chunks, n: l.n}
}

// appended returns l with it after its items: a copy of the last chunk,
// one item longer (or a new chunk), and of the chunks' index.
func (l ItemList) appended(it ItemRef) ItemList {
	chunks := make([][]ItemRef, len(l.chunks), len(l.chunks)+1)
	copy(chunks, l.chunks)
	if l.n%itemChunkLen == 0 {
		chunks = append(chunks, []ItemRef{it})
	} else {
		last := chunks[len(chunks)-1]
		chunks[len(chunks)-1] = append(last[:len(last):len(last)], it)
	}
	return ItemList{chunks: chunks, n: l.n + 1}
}

// MarshalJSON encodes the items as an array.
func (l ItemList) MarshalJSON() ([]byte, error) { return json.Marshal(l.Slice()) }

// UnmarshalJSON decodes an array of items (null: none).
func (l *ItemList) UnmarshalJSON(data []byte) error {
	var items []ItemRef
	if err := Unmarshal(data, &items); err != nil {
		return err
	}
	*l = ItemsOf(items...)
	return nil
}
