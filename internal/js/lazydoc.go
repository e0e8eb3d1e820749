package js

import (
	"slices"

	"github.com/dop251/goja"

	"github.com/folio-db/folio/internal/rawdoc"
)

// lazyDoc is a BSON document seen from JavaScript as an object whose
// fields are converted when first read, as MongoDB's server wraps a
// document (its BSONHolder) instead of converting it whole: a $where that
// reads one field converts one field. Its properties enumerate in the
// document's field order (integer-like names included), then the ones a
// script added. Writes stay in the object.
type lazyDoc struct {
	v   *vm
	raw []byte
	// vals holds the fields read or written so far (a few, so a slice);
	// deleted the names removed; added the names a script added, in
	// order.
	vals    []lazyField
	deleted []string
	added   []string
	dirty   bool
}

type lazyField struct {
	key string
	val goja.Value
}

func (d *lazyDoc) find(key string) int {
	for i := range d.vals {
		if d.vals[i].key == key {
			return i
		}
	}
	return -1
}

func (d *lazyDoc) Get(key string) goja.Value {
	if i := d.find(key); i >= 0 {
		return d.vals[i].val
	}
	if slices.Contains(d.deleted, key) {
		return nil
	}
	raw := rawdoc.Lookup(d.raw, key)
	if raw.Type == 0 {
		return nil
	}
	v := d.v.toJS(raw)
	d.vals = append(d.vals, lazyField{key, v})
	return v
}

func (d *lazyDoc) Set(key string, val goja.Value) bool {
	d.dirty = true
	if i := d.find(key); i >= 0 {
		d.vals[i].val = val
		return true
	}
	if j := slices.Index(d.deleted, key); j >= 0 {
		d.deleted = slices.Delete(d.deleted, j, j+1)
		d.added = append(d.added, key)
	} else if rawdoc.Lookup(d.raw, key).Type == 0 {
		d.added = append(d.added, key)
	}
	d.vals = append(d.vals, lazyField{key, val})
	return true
}

func (d *lazyDoc) Has(key string) bool {
	if d.find(key) >= 0 {
		return true
	}
	return !slices.Contains(d.deleted, key) && rawdoc.Lookup(d.raw, key).Type != 0
}

func (d *lazyDoc) Delete(key string) bool {
	d.dirty = true
	if i := d.find(key); i >= 0 {
		d.vals = slices.Delete(d.vals, i, i+1)
	}
	if i := slices.Index(d.added, key); i >= 0 {
		d.added = slices.Delete(d.added, i, i+1)
		return true
	}
	if rawdoc.Lookup(d.raw, key).Type != 0 && !slices.Contains(d.deleted, key) {
		d.deleted = append(d.deleted, key)
	}
	return true
}

func (d *lazyDoc) Keys() []string {
	var keys []string
	it := rawdoc.Iterate(d.raw)
	for {
		k, _, ok := it.Next()
		if !ok {
			break
		}
		if !slices.Contains(d.deleted, string(k)) {
			keys = append(keys, string(k))
		}
	}
	return append(keys, d.added...)
}

// pristine reports whether the document is unchanged and none of its
// fields was handed to the script (which might have changed it), so its
// BSON is still raw.
func (d *lazyDoc) pristine() bool { return !d.dirty && len(d.vals) == 0 }
