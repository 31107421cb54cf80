package addons

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// serviceMonitorGVK is the Prometheus Operator's ServiceMonitor. Its Go module is not usable here
// (it needs a newer Kubernetes than capwin pins), so the fields the addon sets are written out
// from the operator's API reference (monitoring.coreos.com/v1): the strict decode catches a
// misspelt or misplaced field.
var serviceMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}

type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port        string `json:"port"`
			Interval    string `json:"interval"`
			Relabelings []struct {
				SourceLabels []string `json:"sourceLabels"`
				TargetLabel  string   `json:"targetLabel"`
			} `json:"relabelings"`
		} `json:"endpoints"`
	} `json:"spec"`
}

func (s *serviceMonitor) DeepCopyObject() runtime.Object {
	out := &serviceMonitor{}
	data, _ := json.Marshal(s)
	_ = json.Unmarshal(data, out)
	return out
}

// TestServiceMonitorSelectsTheExporters: the ServiceMonitor addon scrapes the monitoring addon's
// Service, by its labels, in its namespace, on its named port.
func TestServiceMonitorSelectsTheExporters(t *testing.T) {
	g := NewWithT(t)
	var service object
	for _, o := range decode(t, processedManifests(t, vcenterCalico, "windows-exporter", nil)) {
		if o.u.GetKind() == "Service" {
			service = o
		}
	}
	objs := decode(t, processedManifests(t, vcenterCalico, "windows-exporter-servicemonitor", nil))
	g.Expect(objs).To(HaveLen(1))
	sm, ok := objs[0].typed.(*serviceMonitor)
	g.Expect(ok).To(BeTrue(), "%T", objs[0].typed)
	g.Expect(sm.Spec.Selector.MatchLabels).To(Equal(service.u.GetLabels()))
	g.Expect(sm.Spec.NamespaceSelector.MatchNames).To(Equal([]string{service.u.GetNamespace()}))
	g.Expect(sm.Namespace).To(Equal(service.u.GetNamespace()))
	ports, _, _ := unstructured.NestedSlice(service.u.Object, "spec", "ports")
	g.Expect(ports).To(HaveLen(1))
	g.Expect(sm.Spec.Endpoints).To(HaveLen(1))
	g.Expect(sm.Spec.Endpoints[0].Port).To(Equal(ports[0].(map[string]any)["name"]))
}
