package windowsconfig

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/directory"
)

// accountFinalizer holds a WindowsConfig whose node's computer account capwin deletes or takes
// out of groups when the Machine goes (spec.activeDirectory.directory), until that is done or the
// cleanup timeout has passed.
const accountFinalizer = "windowsconfig.bootstrap.cluster.x-k8s.io/computer-account"

// DefaultAccountCleanupTimeout bounds how long a Machine's deletion waits for its computer
// account's cleanup; then a Warning event names what is left to do by hand.
const DefaultAccountCleanupTimeout = 10 * time.Minute

// Directory retries: while the node is joining, and after an error.
const (
	accountPoll  = 10 * time.Second
	accountRetry = time.Minute
)

// cleansAccount reports whether the Machine's deletion has directory work: delete the account,
// or take it out of groups.
func cleansAccount(cfg *bootstrapv1.WindowsConfig) bool {
	ad := cfg.Spec.ActiveDirectory
	return ad != nil && ad.Directory != nil && (len(ad.Groups) > 0 || deletePolicy(ad) == bootstrapv1.ComputerAccountDelete)
}

func deletePolicy(ad *bootstrapv1.ActiveDirectory) string {
	if ad.ComputerAccounts == nil || ad.ComputerAccounts.DeletePolicy == "" {
		return bootstrapv1.ComputerAccountKeep
	}
	return ad.ComputerAccounts.DeletePolicy
}

func reuseAllowed(ad *bootstrapv1.ActiveDirectory) bool {
	return ad.ComputerAccounts != nil && ad.ComputerAccounts.Reuse == bootstrapv1.ComputerAccountAllow
}

// computerName is the Machine's Hostname address, which the infrastructure provider reports
// from the name it gave the VM.
func computerName(m *clusterv1.Machine) string {
	for _, a := range m.Status.Addresses {
		if a.Type == clusterv1.MachineHostName {
			return a.Address
		}
	}
	return ""
}

func setAccountCondition(cfg *bootstrapv1.WindowsConfig, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(cfg, metav1.Condition{Type: bootstrapv1.ComputerAccountReadyCondition, Status: status, Reason: reason, Message: msg})
}

// dialDirectory connects to spec.activeDirectory.directory with its Secret and CA.
func (r *Reconciler) dialDirectory(ctx context.Context, cfg *bootstrapv1.WindowsConfig) (*directory.Conn, error) {
	d := cfg.Spec.ActiveDirectory.Directory
	login, err := r.credentials(ctx, cfg.Namespace, d.Credentials.Name)
	if err != nil {
		return nil, fmt.Errorf("directory credentials: %w", err)
	}
	var ca string
	if d.CA != nil {
		if ca, err = r.caData(ctx, cfg.Namespace, d.CA); err != nil {
			return nil, fmt.Errorf("directory ca: %w", err)
		}
	}
	return directory.Dial(directory.Config{URL: d.URL, CA: []byte(ca), Username: login.Username, Password: login.Password, Timeout: r.DirectoryTimeout})
}

// reconcileAccount finds the node's computer account once the join has made it, and adds it to
// the groups listed; the node waits for that membership before it joins the cluster.
func (r *Reconciler) reconcileAccount(ctx context.Context, s *scope) ctrl.Result {
	cfg, m := s.Config, s.Machine
	ad := cfg.Spec.ActiveDirectory
	if ad == nil || ad.Directory == nil {
		return ctrl.Result{}
	}
	if st := cfg.Status.ActiveDirectory; st != nil && st.ObjectGUID != "" && slices.Equal(st.Groups, ad.Groups) {
		return ctrl.Result{}
	}
	name := computerName(m)
	if name == "" {
		setAccountCondition(cfg, metav1.ConditionFalse, bootstrapv1.WaitingForComputerAccountReason, "Waiting for the Machine's computer name (its Hostname address)")
		return ctrl.Result{RequeueAfter: accountPoll}
	}
	conn, err := r.dialDirectory(ctx, cfg)
	if err != nil {
		return r.directoryProblem(s, err)
	}
	defer conn.Close()
	acct, err := conn.FindComputer(ad.OrganizationalUnit, name)
	if err != nil {
		return r.directoryProblem(s, err)
	}
	if acct == nil {
		setAccountCondition(cfg, metav1.ConditionFalse, bootstrapv1.WaitingForComputerAccountReason,
			fmt.Sprintf("No computer account %s$ in %s yet (the node joins the domain during its bootstrap)", strings.ToUpper(name), ad.OrganizationalUnit))
		if m.Status.NodeRef.IsDefined() {
			return ctrl.Result{RequeueAfter: accountRetry}
		}
		return ctrl.Result{RequeueAfter: accountPoll}
	}
	// An account older than the Machine was not made by this node's join.
	created := !acct.Created.Before(m.CreationTimestamp.Truncate(time.Second))
	if !created && !reuseAllowed(ad) {
		msg := fmt.Sprintf("The domain already has the account %s, created %s, before this Machine: the join refuses to reuse it (computerAccounts.reuse: Refuse). Delete the account, or set reuse: Allow", acct.DN, acct.Created.UTC().Format(time.RFC3339))
		setAccountCondition(cfg, metav1.ConditionFalse, bootstrapv1.StaleComputerAccountReason, msg)
		r.Recorder.Eventf(cfg, m, corev1.EventTypeWarning, bootstrapv1.StaleComputerAccountReason, "FindComputerAccount", "%s", msg)
		return ctrl.Result{RequeueAfter: accountRetry}
	}
	for _, g := range ad.Groups {
		if err := conn.AddMember(g, acct.DN); err != nil {
			return r.directoryProblem(s, err)
		}
	}
	first := cfg.Status.ActiveDirectory == nil || cfg.Status.ActiveDirectory.ObjectGUID != acct.GUID
	cfg.Status.ActiveDirectory = &bootstrapv1.ActiveDirectoryStatus{ComputerName: strings.ToUpper(name), DistinguishedName: acct.DN,
		ObjectGUID: acct.GUID, CreatedByJoin: ptr.To(created), Groups: slices.Clone(ad.Groups)}
	reason, msg := bootstrapv1.ComputerAccountFoundReason, fmt.Sprintf("%s, in %d group(s)", acct.DN, len(ad.Groups))
	if !created {
		reason, msg = bootstrapv1.ComputerAccountReusedReason, msg+"; created before this Machine (reuse: Allow), so it is never deleted by capwin"
	}
	setAccountCondition(cfg, metav1.ConditionTrue, reason, msg)
	if first {
		r.Recorder.Eventf(cfg, m, corev1.EventTypeNormal, reason, "FindComputerAccount", "Computer account %s", msg)
	}
	return ctrl.Result{}
}

func (r *Reconciler) directoryProblem(s *scope, err error) ctrl.Result {
	setAccountCondition(s.Config, metav1.ConditionFalse, bootstrapv1.DirectoryNotAvailableReason, err.Error())
	r.Recorder.Eventf(s.Config, s.Machine, corev1.EventTypeWarning, bootstrapv1.DirectoryNotAvailableReason, "Directory", "%s", err.Error())
	return ctrl.Result{RequeueAfter: accountRetry}
}

// deleteAccount is the Machine deletion's directory work: the account the join created is
// deleted (deletePolicy: Delete), otherwise taken out of the groups capwin added it to. It
// reports done when that is finished, nothing is left to do, or the cleanup timeout passed.
func (r *Reconciler) deleteAccount(ctx context.Context, s *scope) (bool, ctrl.Result) {
	cfg, m := s.Config, s.Machine
	ad := cfg.Spec.ActiveDirectory
	if ad == nil || ad.Directory == nil {
		return true, ctrl.Result{}
	}
	st := cfg.Status.ActiveDirectory
	if st == nil || st.ObjectGUID == "" {
		// Not found while the Machine lived: the join may have run after the last look.
		if st = (&bootstrapv1.ActiveDirectoryStatus{ComputerName: computerName(m), Groups: ad.Groups}); st.ComputerName == "" {
			return true, ctrl.Result{} // no VM got a name: no join happened
		}
	}
	dn, deleted, err := r.cleanAccount(ctx, s, st)
	if err == nil {
		if deleted {
			r.Recorder.Eventf(cfg, m, corev1.EventTypeNormal, bootstrapv1.ComputerAccountDeletedReason, "DeleteComputerAccount", "Deleted computer account %s", dn)
		}
		return true, ctrl.Result{}
	}
	setAccountCondition(cfg, metav1.ConditionFalse, bootstrapv1.DirectoryNotAvailableReason, err.Error())
	deadline := cfg.DeletionTimestamp.Add(r.accountCleanupTimeout())
	if r.now().Before(deadline) {
		r.Recorder.Eventf(cfg, m, corev1.EventTypeWarning, bootstrapv1.DirectoryNotAvailableReason, "DeleteComputerAccount", "%s (retried until %s)", err.Error(), deadline.UTC().Format(time.RFC3339))
		return false, ctrl.Result{RequeueAfter: min(accountPoll, max(time.Second, deadline.Sub(r.now())))}
	}
	r.Recorder.Eventf(cfg, m, corev1.EventTypeWarning, bootstrapv1.ComputerAccountNotDeletedReason, "DeleteComputerAccount",
		"Gave up after %s on computer account %s of %s (objectGUID %s): %s; delete it (deletePolicy: %s) or take it out of its groups (%s) by hand",
		r.accountCleanupTimeout(), st.DistinguishedName, st.ComputerName, st.ObjectGUID, err.Error(), deletePolicy(ad), strings.Join(st.Groups, "; "))
	return true, ctrl.Result{}
}

// cleanAccount acts inside the OU only, on the object with the recorded objectGUID, or, when none
// was recorded, on the account of the computer's name if the join made it (newer than the
// Machine). It returns the account's DN and whether it was deleted.
func (r *Reconciler) cleanAccount(ctx context.Context, s *scope, st *bootstrapv1.ActiveDirectoryStatus) (string, bool, error) {
	ad := s.Config.Spec.ActiveDirectory
	conn, err := r.dialDirectory(ctx, s.Config)
	if err != nil {
		return "", false, err
	}
	defer conn.Close()
	var acct *directory.Account
	created := ptr.Deref(st.CreatedByJoin, false)
	if st.ObjectGUID != "" {
		acct, err = conn.ComputerByGUID(ad.OrganizationalUnit, st.ObjectGUID)
	} else if acct, err = conn.FindComputer(ad.OrganizationalUnit, st.ComputerName); acct != nil {
		created = !acct.Created.Before(s.Machine.CreationTimestamp.Truncate(time.Second))
		if !created && !reuseAllowed(ad) {
			return "", false, nil // a stale account the join refused: not capwin's
		}
	}
	if err != nil || acct == nil {
		return "", false, err // nil, nil: already gone (or moved out of the OU, where capwin does not act)
	}
	if created && deletePolicy(ad) == bootstrapv1.ComputerAccountDelete {
		return acct.DN, true, conn.Delete(acct.DN)
	}
	for _, g := range st.Groups {
		if err := conn.RemoveMember(g, acct.DN); err != nil {
			return acct.DN, false, err
		}
	}
	return acct.DN, false, nil
}

func (r *Reconciler) accountCleanupTimeout() time.Duration {
	if r.AccountCleanupTimeout > 0 {
		return r.AccountCleanupTimeout
	}
	return DefaultAccountCleanupTimeout
}
