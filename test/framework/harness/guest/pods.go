package guest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// runPods starts playing the kubelet for the Pods bound to the node until ctx ends: it watches
// them (the Node authorizer allows a node to list and watch only with this field selector),
// starts them instantly and finishes their deletion once they are marked for it.
func (k *kubelet) runPods(ctx context.Context) {
	selector := fields.OneTermEqualSelector("spec.nodeName", k.name).String()
	lw := cache.NewFilteredListWatchFromClient(k.client.CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.FieldSelector = selector })
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	logger := k.g.cfg.Log.WithName("pods")
	store, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		Logger:        &logger,
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    enqueue,
			UpdateFunc: func(_, obj any) { enqueue(obj) },
			DeleteFunc: enqueue,
		},
	})
	k.g.spawn(func() { informer.RunWithContext(ctx) })
	k.g.spawn(func() {
		for {
			key, shutdown := queue.Get()
			if shutdown {
				return
			}
			obj, exists, _ := store.GetByKey(key)
			var err error
			if exists {
				err = k.syncPod(ctx, obj.(*corev1.Pod))
			} else {
				k.pods.release(key)
			}
			if err != nil && ctx.Err() == nil {
				queue.AddRateLimited(key)
			} else {
				queue.Forget(key)
			}
			queue.Done(key)
		}
	})
	context.AfterFunc(ctx, queue.ShutDown)
}

// syncPod brings one Pod to where a kubelet would have it.
func (k *kubelet) syncPod(ctx context.Context, pod *corev1.Pod) error {
	pods := k.client.CoreV1().Pods(pod.Namespace)
	if pod.DeletionTimestamp != nil {
		// The containers are stopped at once; the kubelet then removes the Pod for good.
		err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0),
			Preconditions:      metav1.NewUIDPreconditions(string(pod.UID)),
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // gone already, or a newer Pod of that name
		}
		return err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || runningAndReady(pod) {
		return nil
	}
	updated := pod.DeepCopy()
	reason, err := k.cannotRun(ctx, pod)
	if err != nil {
		return err
	}
	if reason != "" {
		if waitingFor(pod) == reason {
			return nil
		}
		k.failedStatus(updated, reason)
	} else {
		k.runningStatus(updated)
	}
	_, err = pods.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // the watch brings the Pod's newer version
	}
	return err
}

func runningAndReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// runningStatus is the status of a Pod whose sandbox, init containers and containers all started.
func (k *kubelet) runningStatus(pod *corev1.Pod) {
	now := metav1.Now()
	s := &pod.Status
	s.Phase = corev1.PodRunning
	s.HostIP = k.g.cfg.Address
	s.HostIPs = []corev1.HostIP{{IP: k.g.cfg.Address}}
	ip := k.g.cfg.Address
	if !pod.Spec.HostNetwork {
		ip = k.pods.assign(pod.Namespace + "/" + pod.Name)
	}
	s.PodIP, s.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	if s.StartTime == nil {
		s.StartTime = &now
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized,
		corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
		setPodCondition(s, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	s.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		st := containerStatus(pod, c)
		st.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now, ContainerID: st.ContainerID}}
		st.Ready, st.Started = true, ptr.To(false)
		s.InitContainerStatuses = append(s.InitContainerStatuses, st)
	}
	s.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		st := containerStatus(pod, c)
		st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		st.Ready, st.Started = true, ptr.To(true)
		s.ContainerStatuses = append(s.ContainerStatuses, st)
	}
}

func containerStatus(pod *corev1.Pod, c corev1.Container) corev1.ContainerStatus {
	id := sha256.Sum256([]byte(string(pod.UID) + "/" + c.Name))
	image := sha256.Sum256([]byte(c.Image))
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: c.Image + "@sha256:" + hex.EncodeToString(image[:]),
		ContainerID: "containerd://" + hex.EncodeToString(id[:]),
	}
}

func setPodCondition(s *corev1.PodStatus, c corev1.PodCondition) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == c.Type {
			if s.Conditions[i].Status != c.Status {
				s.Conditions[i] = c
			}
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}

// failedStatus is the status of a Pod whose containers containerd refused to create.
func (k *kubelet) failedStatus(pod *corev1.Pod, message string) {
	now := metav1.Now()
	s := &pod.Status
	s.Phase = corev1.PodPending
	s.HostIP, s.HostIPs = k.g.cfg.Address, []corev1.HostIP{{IP: k.g.cfg.Address}}
	if s.StartTime == nil {
		s.StartTime = &now
	}
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(s, corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now})
	}
	s.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		st := containerStatus(pod, c)
		st.ContainerID = ""
		st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerError", Message: message}}
		s.ContainerStatuses = append(s.ContainerStatuses, st)
	}
}

// waitingFor returns the message a Pod's first container waits with ("" if none).
func waitingFor(pod *corev1.Pod) string {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Waiting != nil {
			return c.State.Waiting.Message
		}
	}
	return ""
}
