package experiments

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
)

// A pairing's variable is what its two selectors set differently: a key
// that both selectors set to different values, or that only one of them
// sets. Every other attribute of the two cells' resolved configuration must
// be equal. The attributes are not a list kept by hand: they are every leaf
// field of the resolved Experiment (the cell's own, with its measured
// duration and warm-up), found by reflection, plus the cell's system; a
// knob added to Engine or Workload later is compared without anyone
// remembering to add it.
//
// A field is named by its path of YAML keys ("engine.tls",
// "workload.producers", "duration"); a selector key varies the fields whose
// own key it is (the last part of the path: path, flush, budget, rate, …)
// and those whose `pair` struct tag lists it (seg for segment_size, conc
// for producers, coalesce for coalesce_wait, rate for the loop mode that
// setting a rate implies).

// configAttr is one leaf of a cell's resolved configuration.
type configAttr struct {
	Name  string   // YAML path: "engine.path"
	Keys  []string // selector keys that set it
	Value reflect.Value
}

// configAttrs flattens a cell's resolved configuration into its leaves, in
// declaration order, with "system" first; each Value is the cell's own
// field (settable).
func configAttrs(c *Cell) []configAttr {
	sys := c.System
	if sys == "" {
		sys = "brokerlab"
	}
	out := []configAttr{{Name: "system", Keys: []string{"system"}, Value: reflect.ValueOf(sys)}}
	return appendAttrs(out, "", reflect.ValueOf(&c.Exp).Elem())
}

func appendAttrs(out []configAttr, prefix string, v reflect.Value) []configAttr {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key := fieldKey(f)
		name := prefix + key
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct && !isLeafType(f.Type) {
			out = appendAttrs(out, name+".", fv)
			continue
		}
		keys := []string{key}
		if tag := f.Tag.Get("pair"); tag != "" {
			keys = append(keys, strings.Split(tag, ",")...)
		}
		out = append(out, configAttr{Name: name, Keys: keys, Value: fv})
	}
	return out
}

// fieldKey is a field's YAML key (its JSON key when YAML skips it, as for
// Mode), else its Go name.
func fieldKey(f reflect.StructField) string {
	for _, tag := range []string{"yaml", "json"} {
		if k, _, _ := strings.Cut(f.Tag.Get(tag), ","); k != "" && k != "-" {
			return k
		}
	}
	return f.Name
}

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

// isLeafType reports whether a struct type is one value (it marshals itself
// as text) rather than a group of attributes.
func isLeafType(t reflect.Type) bool { return t.Implements(textMarshaler) }

// attrString formats a leaf value for a refusal: pointers dereferenced
// ("unset" when nil), text marshalers in their own form.
func attrString(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "unset"
		}
		v = v.Elem()
	}
	if v.Type().Implements(textMarshaler) {
		if b, err := v.Interface().(encoding.TextMarshaler).MarshalText(); err == nil {
			return string(b)
		}
	}
	if v.Kind() == reflect.String && v.String() == "" {
		return `""`
	}
	return fmt.Sprint(v.Interface())
}

// variedKeys are the selector keys a pairing varies: set by both selectors
// to different values, or by one of them only.
func variedKeys(p Pairing) map[string]bool {
	out := map[string]bool{}
	for k, v := range p.Num {
		if w, ok := p.Den[k]; !ok || sizeKeyFor(k, v) != sizeKeyFor(k, w) {
			out[k] = true
		}
	}
	for k := range p.Den {
		if _, ok := p.Num[k]; !ok {
			out[k] = true
		}
	}
	return out
}

// sizeKeyFor normalises a selector value the way matches does.
func sizeKeyFor(k, v string) string {
	if k == "size" {
		return sizeKey(v)
	}
	return v
}

// configDiffs names every attribute of the two cells' resolved
// configuration that differs although the pairing does not vary it, with
// both values.
func configDiffs(p Pairing, num, den *Cell) []string {
	varied := variedKeys(p)
	a, b := configAttrs(num), configAttrs(den)
	var diffs []string
	for i := range a {
		if reflect.DeepEqual(a[i].Value.Interface(), b[i].Value.Interface()) {
			continue
		}
		free := false
		for _, k := range a[i].Keys {
			free = free || varied[k]
		}
		if !free {
			diffs = append(diffs, fmt.Sprintf("%s differs (%s vs %s) but the selectors do not vary it",
				a[i].Name, attrString(a[i].Value), attrString(b[i].Value)))
		}
	}
	return diffs
}
