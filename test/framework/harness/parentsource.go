package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// The golden disks of Images are also on a simulated file share that every host's computer
// account can read, for machines that name them by parentDiskSource: \\fs01\golden\<file>.

// shareOf is an image's golden disk on the share.
func shareOf(img Image) string {
	return `\\fs01\golden\` + img.HyperVDisk[strings.LastIndex(img.HyperVDisk, `\`)+1:]
}

// shareContent is what the share serves for an image (a simulated disk: its bytes only name it).
func shareContent(img Image) []byte { return []byte("capwin harness golden disk " + img.HyperVDisk) }

func shareHash(img Image) string {
	sum := sha256.Sum256(shareContent(img))
	return hex.EncodeToString(sum[:])
}

// HyperVSource returns the parentDiskSource of the image whose golden disk is at path (nil for
// another path): the same disk, copied by capwin from the share to each host that needs it.
func HyperVSource(path string) *infrav1.HyperVParentDiskSource {
	for _, img := range Images {
		if strings.EqualFold(img.HyperVDisk, path) {
			return &infrav1.HyperVParentDiskSource{URL: shareOf(img), SHA256: shareHash(img)}
		}
	}
	return nil
}

// addShares puts every image's golden disk on the hosts' share.
func addShares(h interface{ AddShareFile(string, []byte) }) {
	for _, img := range Images {
		h.AddShareFile(shareOf(img), shareContent(img))
	}
}

// isCopyOf reports whether path is a host's verified copy of the image's share file.
func isCopyOf(img Image, path string) bool {
	return strings.EqualFold(path, wire.ParentCachePath(hyperv.DefaultDiskPath, shareHash(img)))
}
