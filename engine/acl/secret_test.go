package acl

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"
)

func TestSecretKeyAndVerifyHex(t *testing.T) {
	r := MustCompile(Config{Accounts: []Account{{AccessKey: "rocketmq2", SecretKey: "12345678", DefaultTopicPerm: "PUB"}}})
	sk, ok := r.SecretKey("rocketmq2")
	if !ok || sk != "12345678" {
		t.Fatalf("SecretKey: %q %v", sk, ok)
	}
	if _, ok := r.SecretKey("nobody"); ok {
		t.Fatal("SecretKey of an unknown account")
	}
	// hex(HmacSHA1("12345678", "20240101T000000Z")), as the v5 clients sign x-mq-date-time.
	const date = "20240101T000000Z"
	sig := "9cd5c4b4d0ad0f2b5fbd3fa3c0a8c1f2d4e3c6a1"
	if VerifyHex([]byte(date), sk, sig) {
		t.Fatal("a made-up signature verified")
	}
	good := hexHMAC(date, sk)
	if !VerifyHex([]byte(date), sk, good) || !VerifyHex([]byte(date), sk, upper(good)) {
		t.Fatal("the right signature did not verify")
	}
	if VerifyHex([]byte(date+"x"), sk, good) {
		t.Fatal("a signature over other content verified")
	}
}

func hexHMAC(content, key string) string {
	h := hmac.New(sha1.New, []byte(key))
	h.Write([]byte(content))
	return hex.EncodeToString(h.Sum(nil))
}

func upper(s string) string { return strings.ToUpper(s) }
