package postgres

import "testing"

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain",
		"failed to connect to `user=u database=db`:\n\t127.0.0.1:1 (localhost): dial error: refused\n\t127.0.0.1:1 (localhost): dial error: refused": "failed to connect to `user=u database=db`: 127.0.0.1:1 (localhost): dial error: refused",
		"failed to connect to `user=u database=db`:\n\t[::1]:1 (localhost): refused\n\t127.0.0.1:1 (localhost): refused\r\n":                         "failed to connect to `user=u database=db`: [::1]:1 (localhost): refused; 127.0.0.1:1 (localhost): refused",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
