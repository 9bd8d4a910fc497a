package location

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/tmp/x/memory.db", "/tmp/x/memory.db"},
		{"postgres://u@h:5432/db", "postgres://u@h:5432/db"},
		{"postgres://u:S3cret@h:5432/db", "postgres://u:xxxxx@h:5432/db"},
		{"postgres://agentls@127.0.0.1:55432/mem1?password=WrongQPass1", "postgres://agentls@127.0.0.1:55432/mem1?password=xxxxx"},
		{"postgresql://h/db?sslpassword=k3y&sslmode=require", "postgresql://h/db?sslmode=require&sslpassword=xxxxx"},
		{"postgres://agentls:S3cretPWxyz@[::1:55432/mem1", Withheld},
		{"POSTGRES://u:p@h/db?PASSWORD=q", "postgres://u:xxxxx@h/db?PASSWORD=xxxxx"},
	} {
		got := Redact(tc.in)
		if got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, secret := range []string{"S3cret", "WrongQPass1", "k3y"} {
			if strings.Contains(tc.in, secret) && strings.Contains(got, secret) {
				t.Errorf("Redact(%q) = %q leaks %q", tc.in, got, secret)
			}
		}
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	loc := "postgres://u:S3cretPW@h/db?password=Q2"
	got := Scrub(`connect u:S3cretPW@h failed (password=Q2)`, loc)
	if strings.Contains(got, "S3cretPW") || strings.Contains(got, "Q2") {
		t.Errorf("Scrub leaks: %q", got)
	}
	bad := "postgres://u:S3cretPWxyz@[::1:55432/mem1"
	if got := Scrub("open store "+bad+": bad", bad); strings.Contains(got, "S3cret") {
		t.Errorf("Scrub of an unparseable URL leaks: %q", got)
	}
}

func TestIsURLAndResolve(t *testing.T) {
	t.Parallel()
	if !IsURL("PostgreSQL://h/db") || IsURL("postgres.db") {
		t.Error("IsURL")
	}
	if got := Resolve("/w", "m.db"); got != "/w/m.db" {
		t.Errorf("Resolve relative = %q", got)
	}
	if got := Resolve("/w", "postgres://h/db"); got != "postgres://h/db" {
		t.Errorf("Resolve URL = %q", got)
	}
}
