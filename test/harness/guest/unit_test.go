package guest

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

func TestNewReportIsBounded(t *testing.T) {
	var log strings.Builder
	for i := range 20 {
		log.WriteString(strings.Repeat("é", 100) + " line " + string(rune('a'+i)) + "\r\n")
	}
	r, data := newReport("join", StateFailed, strings.Repeat("m", 300), log.String(), 1024)
	if len(data) > 1024 || utf8.RuneCountInString(r.Message) != 256 || !strings.HasSuffix(r.LogTail, "line t") {
		t.Errorf("%d bytes, message of %d characters, log tail %q", len(data), utf8.RuneCountInString(r.Message), r.LogTail)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil || back != r {
		t.Errorf("JSON %s does not round-trip: %v", data, err)
	}
	if _, data := newReport("preflight", StateRunning, "", "", 1024); string(data) != `{"step":"preflight","state":"Running","message":"","logTail":""}` {
		t.Errorf("empty report: %s", data)
	}
}

func TestVerifyDetachedJWSRejects(t *testing.T) {
	// Header {"alg":"HS256","kid":"abcdef"}; the signature is garbage.
	header := "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9"
	for _, token := range []string{"", "a.b", header + ".payload.c2ln", header + "..c2ln", "e30..c2ln"} {
		if verifyDetachedJWS(token, "content", "abcdef", "0123456789abcdef") {
			t.Errorf("%q verified", token)
		}
	}
}

func TestParseKubeletFlags(t *testing.T) {
	f, err := parseKubeletFlags([]string{"--hostname-override=win-a", "--node-labels=a=b,c=", "--register-with-taints=os=windows:NoSchedule,dedicated:NoExecute"})
	want := []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}, {Key: "dedicated", Effect: corev1.TaintEffectNoExecute}}
	if err != nil || f.hostnameOverride != "win-a" || f.nodeLabels["a"] != "b" || len(f.nodeLabels) != 2 || len(f.taints) != 2 || f.taints[0] != want[0] || f.taints[1] != want[1] {
		t.Errorf("%+v, %v", f, err)
	}
	if _, err := parseKubeletFlags([]string{"--register-with-taints=os=windows:Sometimes"}); err == nil {
		t.Error("an invalid taint effect was accepted")
	}
}
