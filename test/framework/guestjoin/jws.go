package guestjoin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// SignDetachedJWS is an HS256 compact JWS of content with the payload left out
// ("header..signature"), keyed with the token secret and naming the token ID as "kid", as the
// controller-manager's bootstrap signer writes it into cluster-info.
func SignDetachedJWS(content, tokenID, tokenSecret string) string {
	header, _ := json.Marshal(map[string]string{"alg": "HS256", "kid": tokenID})
	h := base64.RawURLEncoding.EncodeToString(header)
	return h + ".." + base64.RawURLEncoding.EncodeToString(hs256(h, content, tokenSecret))
}

// VerifyDetachedJWS checks a detached compact JWS (RFC 7515 appendix F: "header..signature")
// over content, as the bootstrap signer writes it into cluster-info: HS256 keyed with the
// token secret, the token ID as "kid". It is verified from the header it carries rather than
// re-signed (k8s.io/cluster-bootstrap/token/jws would pull in go-jose, which this module lacks).
func VerifyDetachedJWS(token, content, tokenID, tokenSecret string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[1] != "" {
		return false
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return false
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(rawHeader, &header); err != nil || header.Alg != "HS256" || header.Kid != tokenID {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	return hmac.Equal(sig, hs256(parts[0], content, tokenSecret))
}

func hs256(header, content, key string) []byte {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(header + "." + base64.RawURLEncoding.EncodeToString([]byte(content))))
	return mac.Sum(nil)
}
