package guestjoin

import (
	"encoding/base64"
	"fmt"
)

// DecodeGuestinfo removes a guestinfo value's transport encoding; gzip stays (cloudbase-init
// detects it by its magic bytes, and so does the guest).
func DecodeGuestinfo(value, encoding string) ([]byte, error) {
	switch encoding {
	case "base64", "b64", "gzip+base64", "gz+b64":
		return base64.StdEncoding.DecodeString(value)
	case "":
		return []byte(value), nil
	default:
		return nil, fmt.Errorf("unknown encoding %q", encoding)
	}
}

// GuestinfoData decodes the user data and the instance metadata a VM's extraConfig carries
// (guestinfo.userdata and guestinfo.metadata, each with its .encoding).
func GuestinfoData(extraConfig map[string]string) (userdata, metadata []byte, err error) {
	userdata, err = DecodeGuestinfo(extraConfig["guestinfo.userdata"], extraConfig["guestinfo.userdata.encoding"])
	if err != nil {
		return nil, nil, fmt.Errorf("guestinfo.userdata: %w", err)
	}
	metadata, err = DecodeGuestinfo(extraConfig["guestinfo.metadata"], extraConfig["guestinfo.metadata.encoding"])
	if err != nil {
		return nil, nil, fmt.Errorf("guestinfo.metadata: %w", err)
	}
	return userdata, metadata, nil
}
