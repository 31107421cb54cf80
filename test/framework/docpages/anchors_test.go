package docpages

import (
	"reflect"
	"testing"
)

func TestAnchors(t *testing.T) {
	got := Anchors([]byte("# The `windows` flavor (vCenter)\n## 5. Field reference\n## Notes\n## Notes\n```\n# not a heading\n```\n<a name=\"x-y\"></a>\n"))
	want := map[string]bool{"the-windows-flavor-vcenter": true, "5-field-reference": true, "notes": true, "notes-1": true, "x-y": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestLinks(t *testing.T) {
	text := "See [a](../b.md#c), [d](#e), [web](https://x.io/y), `[no](z.md)`.\n```\n[no](q.md)\n```\n[f](img/g.png \"title\")\n"
	got := Links("docs/p.md", []byte(text))
	want := []Link{{1, "b.md", "c"}, {1, "docs/p.md", "e"}, {5, "docs/img/g.png", ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
