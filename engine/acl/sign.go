package acl

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"slices"
	"unicode/utf16"
)

// Ext field names of a signed request (SessionCredentials.java).
const (
	FieldAccessKey     = "AccessKey"
	FieldSignature     = "Signature"
	FieldSecurityToken = "SecurityToken"

	// fieldUniqueKeyQuery is MixAll.UNIQUE_MSG_QUERY_FLAG, which clients up
	// to 4.9.3 add to QUERY_MESSAGE after signing: RocketMQ leaves it out of
	// the content for those versions.
	fieldUniqueKeyQuery = "_UNIQUE_KEY_QUERY"
	// versionV4_9_3 is MQVersion.Version.V4_9_3.ordinal().
	versionV4_9_3 int32 = 400
)

// Content is the byte string a request's signature covers
// (AclUtils.combineRequestContent as PlainAccessResource.parse feeds it):
// the values of every ext field except Signature, in ascending key order
// (Java's String order, i.e. UTF-16 code units), concatenated, then the
// body. For requests of version ≤ 4.9.3 the _UNIQUE_KEY_QUERY field is left
// out. AccessKey and SecurityToken are ext fields like the others.
func Content(ext map[string]string, body []byte, version int32) []byte {
	keys := make([]string, 0, len(ext))
	n := len(body)
	for k, v := range ext {
		if k == FieldSignature || (k == fieldUniqueKeyQuery && version <= versionV4_9_3) {
			continue
		}
		keys = append(keys, k)
		n += len(v)
	}
	slices.SortFunc(keys, compareJava)
	out := make([]byte, 0, n)
	for _, k := range keys {
		out = append(out, ext[k]...)
	}
	return append(out, body...)
}

// Signature is Base64(HmacSHA1(secretKey, content)) (AclSigner.calSignature),
// the secret key taken as its UTF-8 bytes.
func Signature(content []byte, secretKey string) string {
	mac := hmac.New(sha1.New, []byte(secretKey))
	mac.Write(content)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Sign adds AccessKey, SecurityToken (when token is not "") and Signature to
// ext as AclClientRPCHook does before a request is sent: the signature
// covers the other fields, the credentials included, and the body. ext must
// already hold every other field the request will carry.
func Sign(ext map[string]string, body []byte, version int32, accessKey, secretKey, token string) {
	ext[FieldAccessKey] = accessKey
	if token != "" {
		ext[FieldSecurityToken] = token
	}
	delete(ext, FieldSignature)
	ext[FieldSignature] = Signature(Content(ext, body, version), secretKey)
}

// verify reports whether sig is the signature of content under secretKey,
// in constant time.
func verify(content []byte, secretKey, sig string) bool {
	return hmac.Equal([]byte(Signature(content, secretKey)), []byte(sig))
}

// compareJava orders strings as java.lang.String.compareTo: by UTF-16 code
// unit. It equals byte order except where a supplementary character meets
// one in U+E000..U+FFFF.
func compareJava(a, b string) int {
	ascii := true
	for i := 0; i < len(a) && ascii; i++ {
		ascii = a[i] < 0x80
	}
	for i := 0; i < len(b) && ascii; i++ {
		ascii = b[i] < 0x80
	}
	if ascii {
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}
