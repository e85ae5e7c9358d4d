package plan

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/rackform/rackform/providers"
)

// Servers planned alike share their lists in memory, as the plan file's
// tables share them on disk: a fleet of 100,000 servers has a handful of
// distinct step, change and component lists, and holding one copy per
// server would cost more than the rest of the plan together.
//
// A list a Plan holds may therefore be another server's too: it is
// read-only. Code that changes one server's steps, changes or observed
// components copies the list first (slices.Clone), as Learn does.

// Interner keeps one copy of each distinct list, compared by the bytes
// the plan file writes for it (two lists that encode alike decode alike).
// The zero value is not ready: use NewInterner.
type Interner struct {
	key     []byte
	steps   map[string][]Step
	changes map[string][]Change
	comps   map[string][]providers.Component
}

// NewInterner returns an empty Interner.
func NewInterner() *Interner {
	return &Interner{
		steps: map[string][]Step{}, changes: map[string][]Change{},
		comps: map[string][]providers.Component{},
	}
}

// Steps returns the kept list equal to steps, keeping steps when none is.
func (in *Interner) Steps(steps []Step) []Step {
	return intern(in, in.steps, steps, true, appendStep)
}

// StepsOf is Steps for a list the caller builds in a buffer it reuses:
// when none is kept equal to it, a copy is kept and returned. A fleet's
// servers mostly share their steps, so most of them allocate nothing.
func (in *Interner) StepsOf(buf []Step) []Step {
	return intern(in, in.steps, buf, false, appendStep)
}

// ChangesOf is Changes for a list in a buffer the caller reuses, as
// StepsOf.
func (in *Interner) ChangesOf(buf []Change) []Change {
	return intern(in, in.changes, buf, false, appendNoError(appendChange))
}

// Changes returns the kept list equal to changes, keeping changes when
// none is.
func (in *Interner) Changes(changes []Change) []Change {
	return intern(in, in.changes, changes, true, appendNoError(appendChange))
}

// Components returns the kept list equal to comps, keeping comps when
// none is.
func (in *Interner) Components(comps []providers.Component) []providers.Component {
	return intern(in, in.comps, comps, true, appendNoError(appendComponent))
}

// appendNoError is an encoder that cannot fail as one that can.
func appendNoError[T any](f func([]byte, *T) []byte) func([]byte, *T) ([]byte, error) {
	return func(dst []byte, v *T) ([]byte, error) { return f(dst, v), nil }
}

// intern returns the kept list equal to list, else list itself, kept
// unless it cannot be encoded. A list the caller does not own (a buffer
// it reuses) is copied before it is kept or returned.
func intern[T any](in *Interner, kept map[string][]T, list []T, owned bool, encode func([]byte, *T) ([]byte, error)) []T {
	own := func() []T {
		if owned {
			return list
		}
		return slices.Clone(list)
	}
	if len(list) == 0 {
		return list[:0:0]
	}
	key := in.key[:0]
	for i := range list {
		var err error
		if key, err = encode(key, &list[i]); err != nil {
			// Not comparable by its bytes (the writer will say why):
			// kept as it is, shared with nothing.
			in.key = key[:0]
			return own()
		}
		// Compact JSON holds no raw newline: one ends each element.
		key = append(key, '\n')
	}
	in.key = key
	if k, ok := kept[string(key)]; ok {
		return k
	}
	l := own()
	kept[string(key)] = l
	return l
}

// refLists shares the lists Decode expands from table positions: servers
// that name the same positions get the same list.
type refLists[T any] struct {
	key  []byte
	kept map[string][]T
}

// expand returns the list of table rows refs names, the one already made
// for the same refs when there is one; what names a position the table
// does not hold is an error naming what.
func (r *refLists[T]) expand(refs []int, table []T, what string) ([]T, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	r.key = r.key[:0]
	for _, k := range refs {
		r.key = strconv.AppendInt(append(r.key, ','), int64(k), 10)
	}
	if l, ok := r.kept[string(r.key)]; ok {
		return l, nil
	}
	out := make([]T, len(refs))
	for j, k := range refs {
		if k < 0 || k >= len(table) {
			return nil, fmt.Errorf("%s %d", what, k)
		}
		out[j] = table[k]
	}
	if r.kept == nil {
		r.kept = map[string][]T{}
	}
	r.kept[string(r.key)] = out
	return out, nil
}
