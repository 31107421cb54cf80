package guestjoin

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestJWSRoundTrip(t *testing.T) {
	sig := SignDetachedJWS("content", "abcdef", "0123456789abcdef")
	if !VerifyDetachedJWS(sig, "content", "abcdef", "0123456789abcdef") {
		t.Error("own signature does not verify")
	}
	for _, c := range [][3]string{{"other", "abcdef", "0123456789abcdef"}, {"content", "abcdeg", "0123456789abcdef"}, {"content", "abcdef", "0123456789abcdeg"}} {
		if VerifyDetachedJWS(sig, c[0], c[1], c[2]) {
			t.Errorf("verifies for %v", c)
		}
	}
}

func TestVerifyDetachedJWSRejects(t *testing.T) {
	// Header {"alg":"HS256","kid":"abcdef"}; the signature is garbage.
	header := "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9"
	for _, token := range []string{"", "a.b", header + ".payload.c2ln", header + "..c2ln", "e30..c2ln"} {
		if VerifyDetachedJWS(token, "content", "abcdef", "0123456789abcdef") {
			t.Errorf("%q verified", token)
		}
	}
}

func TestParseKubeletFlags(t *testing.T) {
	f, err := ParseKubeletFlags([]string{"--hostname-override=win-a", "--node-labels=a=b,c=", "--register-with-taints=os=windows:NoSchedule,dedicated:NoExecute"})
	want := []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}, {Key: "dedicated", Effect: corev1.TaintEffectNoExecute}}
	if err != nil || f.HostnameOverride != "win-a" || f.NodeLabels["a"] != "b" || len(f.NodeLabels) != 2 || len(f.Taints) != 2 || f.Taints[0] != want[0] || f.Taints[1] != want[1] {
		t.Errorf("%+v, %v", f, err)
	}
	if _, err := ParseKubeletFlags([]string{"--register-with-taints=os=windows:Sometimes"}); err == nil {
		t.Error("an invalid taint effect was accepted")
	}
}

func TestMergeTaints(t *testing.T) {
	a := []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
	b := []corev1.Taint{{Key: "os", Value: "other", Effect: corev1.TaintEffectNoSchedule}, {Key: "os", Effect: corev1.TaintEffectNoExecute}}
	if got := MergeTaints(a, b); len(got) != 2 || got[0] != a[0] || got[1] != b[1] {
		t.Errorf("%v", got)
	}
}

func TestDecodeGuestinfo(t *testing.T) {
	data, meta, err := GuestinfoData(map[string]string{"guestinfo.userdata": "aGk=", "guestinfo.userdata.encoding": "base64", "guestinfo.metadata": "local-hostname: a"})
	if err != nil || string(data) != "hi" || string(meta) != "local-hostname: a" {
		t.Errorf("%q %q %v", data, meta, err)
	}
	if _, _, err := GuestinfoData(map[string]string{"guestinfo.metadata.encoding": "rot13"}); err == nil || err.Error() != `guestinfo.metadata: unknown encoding "rot13"` {
		t.Errorf("%v", err)
	}
}
