package guest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// verifyDetachedJWS checks a detached compact JWS (RFC 7515 appendix F: "header..signature")
// over content, as the bootstrap signer writes it into cluster-info: HS256 keyed with the
// token secret, the token ID as "kid". It is verified from the header it carries rather than
// re-signed (k8s.io/cluster-bootstrap/token/jws would pull in go-jose, which this module lacks).
func verifyDetachedJWS(token, content, tokenID, tokenSecret string) bool {
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
	mac := hmac.New(sha256.New, []byte(tokenSecret))
	mac.Write([]byte(parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(content))))
	return hmac.Equal(sig, mac.Sum(nil))
}
