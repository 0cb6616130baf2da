package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/stage"
)

// TestStageEntries: Stage has one field per stage kind, keyed by the
// kind's name, whose type is the kind's config entry; and its params are
// what its stage.Def expects.
func TestStageEntries(t *testing.T) {
	fields := (&Stage{}).fields()
	kinds := stage.Kinds()
	if len(fields) != len(kinds) {
		t.Fatalf("Stage has %d kinds, package stage %d", len(fields), len(kinds))
	}
	for i, f := range fields {
		if k := kinds[i].Kind(); f.key != string(k) {
			t.Errorf("Stage field %d is %q, want kind %q (in the table's order)", i, f.key, k)
		}
		ft := reflect.TypeOf(Stage{}).Field(i).Type
		e, ok := reflect.New(ft.Elem()).Interface().(stageEntry)
		if !ok {
			t.Fatalf("%s: %v is no stageEntry", f.key, ft)
		}
		hasTaps := kinds[i].Params()&stage.ParamTaps != 0
		if (e.filterOf() != nil) != hasTaps {
			t.Errorf("%s: filterOf %v, but the kind's taps param is %v", f.key, e.filterOf(), hasTaps)
		}
		_, noMethod := e.(methodless)
		if hasTaps && noMethod == (kinds[i].Params()&stage.ParamMethod != 0) {
			t.Errorf("%s: methodless %v disagrees with the kind's method param", f.key, noMethod)
		}
	}
	var names []string
	for _, d := range kinds {
		names = append(names, string(d.Kind()))
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	if got := kindList(); got != want {
		t.Errorf("kindList() = %q, want %q", got, want)
	}
}

// TestStageFilter: a stage's taps are its kind's filter, none for a shift.
func TestStageFilter(t *testing.T) {
	fir, res := &FIRStage{}, &Resample{}
	for _, tt := range []struct {
		s    Stage
		want *Filter
	}{
		{Stage{Shift: &Shift{}}, nil},
		{Stage{FIR: fir}, &fir.Filter},
		{Stage{Resample: res}, &res.Filter},
		{Stage{}, nil},
	} {
		if got := tt.s.Filter(); got != tt.want {
			t.Errorf("%+v: Filter() = %p, want %p", tt.s, got, tt.want)
		}
	}
}
