package acl

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

// SecretKey returns the secret key of the account accessKey, false when
// there is none. The gRPC front end (engine/proxy) needs it to verify the
// RocketMQ 5 authorization header and to sign the remoting requests it makes
// for the caller.
func (r *Rules) SecretKey(accessKey string) (string, bool) {
	acc := r.accounts[accessKey]
	if acc == nil {
		return "", false
	}
	return acc.secretKey, true
}

// VerifyHex reports whether sig is hex(HmacSHA1(secretKey, content)), case
// insensitive: how RocketMQ 5 clients sign x-mq-date-time.
func VerifyHex(content []byte, secretKey, sig string) bool {
	h := hmac.New(sha1.New, []byte(secretKey))
	h.Write(content)
	want := hex.EncodeToString(h.Sum(nil))
	return hmac.Equal([]byte(want), []byte(strings.ToLower(sig)))
}
