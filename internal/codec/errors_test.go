package codec

import (
	"errors"
	"strings"
	"testing"
)

// checkErr asserts err is an *Error whose message starts with key and contains every want string.
func checkErr(t *testing.T, err error, key string, want ...string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *codec.Error", err, err)
	}
	msg := ce.Error()
	if !strings.HasPrefix(msg, key+": ") {
		t.Errorf("message %q does not start with %q", msg, key)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q does not contain %q", msg, w)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name string
		err  Error
		want string
	}{
		{"full", Error{Key: NodeRegisterAnnotation, Pos: "device 2, field 3 (devmem)", Value: "12x", Msg: "is not an integer"},
			`hami.io/node-nvidia-register: device 2, field 3 (devmem): "12x" is not an integer`},
		{"no pos", Error{Key: NodeLockAnnotation, Value: "a,b", Msg: "bad"}, `hami.io/mutex.lock: "a,b" bad`},
		{"no value", Error{Key: NodeLockAnnotation, Msg: "empty value"}, `hami.io/mutex.lock: empty value`},
		{"truncated", Error{Key: "k", Pos: "offset 1", Value: long, Msg: "bad"}, `k: offset 1: "` + long[:40] + `"... bad`},
		// 39 ASCII bytes then a 3-byte rune: the cut must not split the rune.
		{"rune boundary", Error{Key: "k", Value: strings.Repeat("a", 39) + "€€", Msg: "bad"}, `k: "` + strings.Repeat("a", 39) + `"... bad`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
