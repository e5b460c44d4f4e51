package acl

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"testing"
)

// The expected signatures were computed with openssl, independently of this
// package:
//
//	printf 'rocketmq2xTopicAhello' | openssl dgst -sha1 -hmac '12345678' -binary | base64
//	  KmOX+75ZN+ZVV7tkDI5MWkF5Lp0=
//	printf 'rocketmq2' | openssl dgst -sha1 -hmac '12345678' -binary | base64
//	  Ou1T58RIcyZWaTIwzkhJZWn/Zvs=
func TestSignatureKnownVectors(t *testing.T) {
	ext := map[string]string{"topic": "TopicA", "AccessKey": "rocketmq2", "a": "x", FieldSignature: "ignored"}
	content := Content(ext, []byte("hello"), 317)
	// Keys in order: AccessKey < a < topic (upper case sorts first); Signature left out.
	if got, want := string(content), "rocketmq2xTopicAhello"; got != want {
		t.Fatalf("content %q, want %q", got, want)
	}
	if got, want := Signature(content, "12345678"), "KmOX+75ZN+ZVV7tkDI5MWkF5Lp0="; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
	if got, want := Signature(Content(map[string]string{"AccessKey": "rocketmq2"}, nil, 317), "12345678"),
		"Ou1T58RIcyZWaTIwzkhJZWn/Zvs="; got != want {
		t.Fatalf("signature without body %s, want %s", got, want)
	}
}

// TestSignMatchesStraightforwardHMAC checks Sign against a second,
// straightforward computation of the rule (sorted values, then body).
func TestSignMatchesStraightforwardHMAC(t *testing.T) {
	ext := map[string]string{"b": "TopicB", "a": "pg", "c": "TBW102", "queueId": "3"}
	body := []byte{0, 1, 2, 0xff}
	Sign(ext, body, 317, "rocketmq2", "12345678", "tok")
	// AccessKey, SecurityToken, a, b, c, queueId
	data := append([]byte("rocketmq2"+"tok"+"pg"+"TopicB"+"TBW102"+"3"), body...)
	mac := hmac.New(sha1.New, []byte("12345678"))
	mac.Write(data)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if ext[FieldSignature] != want || ext[FieldAccessKey] != "rocketmq2" || ext[FieldSecurityToken] != "tok" {
		t.Fatalf("signed ext %v, want Signature %s", ext, want)
	}
	// Re-signing replaces the signature rather than signing it.
	Sign(ext, body, 317, "rocketmq2", "12345678", "tok")
	if ext[FieldSignature] != want {
		t.Fatalf("re-signed %s, want %s", ext[FieldSignature], want)
	}
}

func TestContentUniqueKeyQueryByVersion(t *testing.T) {
	ext := map[string]string{"topic": "T", fieldUniqueKeyQuery: "true"}
	if got := string(Content(ext, nil, versionV4_9_3)); got != "T" {
		t.Fatalf("v4.9.3 content %q, want the flag left out", got)
	}
	if got := string(Content(ext, nil, versionV4_9_3+1)); got != "trueT" { // "_" sorts before "t"
		t.Fatalf("v4.9.4 content %q, want the flag signed", got)
	}
}

// Java's TreeMap orders keys by UTF-16 code unit: U+1F600 (D83D DE00) sorts
// before U+FF21, although its UTF-8 bytes sort after.
func TestContentJavaKeyOrder(t *testing.T) {
	ext := map[string]string{"\U0001F600": "first", "\uFF21": "second", "A": "0"}
	if got := string(Content(ext, nil, 317)); got != "0firstsecond" {
		t.Fatalf("content %q, want Java's String order", got)
	}
}
