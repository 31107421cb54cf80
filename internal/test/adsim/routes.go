package adsim

import (
	"bytes"
	"slices"
	"strings"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
	"github.com/jimlambrt/gldap"
)

func (d *Directory) routes(startTLS bool) (*gldap.Mux, error) {
	mux, err := gldap.NewMux()
	if err != nil {
		return nil, err
	}
	for _, err := range []error{
		mux.Bind(func(w *gldap.ResponseWriter, r *gldap.Request) { _ = w.Write(d.bind(r, startTLS)) }),
		mux.ExtendedOperation(d.startTLS, gldap.ExtendedOperationStartTLS),
		mux.Search(d.search),
		mux.Delete(func(w *gldap.ResponseWriter, r *gldap.Request) {
			code, msg := d.del(r)
			_ = w.Write(r.NewResponse(gldap.WithApplicationCode(gldap.ApplicationDelResponse), gldap.WithResponseCode(code), gldap.WithDiagnosticMessage(msg)))
		}),
		mux.Modify(func(w *gldap.ResponseWriter, r *gldap.Request) {
			code, msg := d.modify(r)
			_ = w.Write(r.NewModifyResponse(gldap.WithResponseCode(code), gldap.WithDiagnosticMessage(msg)))
		}),
	} {
		if err != nil {
			return nil, err
		}
	}
	return mux, nil
}

func (d *Directory) bind(r *gldap.Request, startTLS bool) *gldap.BindResponse {
	resp := r.NewBindResponse(gldap.WithResponseCode(gldap.ResultInvalidCredentials))
	m, err := r.GetSimpleBindMessage()
	if err != nil {
		return resp
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if startTLS && !d.secure[r.ConnectionID()] {
		resp.SetResultCode(gldap.ResultConfidentialityRequired)
		resp.SetDiagnosticMessage("00002028: LdapErr: DSID-0C090259, comment: The server requires binds to turn on integrity checking if SSL\\TLS are not already active on the connection")
		return resp
	}
	if u := d.users[strings.ToLower(m.UserName)]; u != nil && u.Password == string(m.Password) && m.Password != "" {
		d.bound[r.ConnectionID()] = u
		resp.SetResultCode(gldap.ResultSuccess)
		return resp
	}
	resp.SetDiagnosticMessage("80090308: LdapErr: DSID-0C09050F, comment: AcceptSecurityContext error, data 52e")
	return resp
}

func (d *Directory) startTLS(w *gldap.ResponseWriter, r *gldap.Request) {
	resp := r.NewExtendedResponse(gldap.WithResponseCode(gldap.ResultSuccess))
	resp.SetResponseName(gldap.ExtendedOperationStartTLS)
	if w.Write(resp) != nil || r.StartTLS(d.serverTLS) != nil {
		return
	}
	d.mu.Lock()
	d.secure[r.ConnectionID()] = true
	d.mu.Unlock()
}

func (d *Directory) search(w *gldap.ResponseWriter, r *gldap.Request) {
	done := func(code int, msg string) {
		_ = w.Write(r.NewSearchDoneResponse(gldap.WithResponseCode(code), gldap.WithDiagnosticMessage(msg)))
	}
	m, err := r.GetSearchMessage()
	if err != nil {
		done(gldap.ResultProtocolError, err.Error())
		return
	}
	filter, err := ldap.CompileFilter(m.Filter)
	if err != nil {
		done(gldap.ResultProtocolError, err.Error())
		return
	}
	d.mu.Lock()
	if d.bound[r.ConnectionID()] == nil {
		d.mu.Unlock()
		done(gldap.ResultOperationsError, "000004DC: LdapErr: DSID-0C090A5C, comment: In order to perform this operation a successful bind must be completed on the connection.")
		return
	}
	if d.entries[strings.ToLower(m.BaseDN)] == nil {
		d.mu.Unlock()
		done(gldap.ResultNoSuchObject, "0000208D: NameErr: DSID-0310028B, problem 2001 (NO_OBJECT)")
		return
	}
	var found []*Entry
	for _, e := range d.entries {
		if inScope(e.DN, m.BaseDN, m.Scope) && matches(e, filter) {
			found = append(found, e.copy())
		}
	}
	d.mu.Unlock()
	for _, e := range found {
		entry := r.NewSearchResponseEntry(e.DN)
		for name, vals := range e.Attrs {
			if len(m.Attributes) == 0 || slices.ContainsFunc(m.Attributes, func(a string) bool { return strings.EqualFold(a, name) }) {
				entry.AddAttribute(attrName(m.Attributes, name), vals)
			}
		}
		_ = w.Write(entry)
	}
	done(gldap.ResultSuccess, "")
}

// attrName is the attribute's name as the request spelled it.
func attrName(requested []string, name string) string {
	for _, a := range requested {
		if strings.EqualFold(a, name) {
			return a
		}
	}
	return name
}

func inScope(dn, base string, scope gldap.Scope) bool {
	dn, base = strings.ToLower(dn), strings.ToLower(base)
	switch scope {
	case gldap.BaseObject:
		return dn == base
	case gldap.SingleLevel:
		_, parent, _ := strings.Cut(dn, ",")
		return parent == base
	}
	return dn == base || strings.HasSuffix(dn, ","+base)
}

// matches evaluates the filters capwin sends: and, or, not, equality and presence.
func matches(e *Entry, f *ber.Packet) bool {
	switch f.Tag {
	case ldap.FilterAnd:
		for _, c := range f.Children {
			if !matches(e, c) {
				return false
			}
		}
		return true
	case ldap.FilterOr:
		return slices.ContainsFunc(f.Children, func(c *ber.Packet) bool { return matches(e, c) })
	case ldap.FilterNot:
		return len(f.Children) == 1 && !matches(e, f.Children[0])
	case ldap.FilterEqualityMatch:
		attr := strings.ToLower(ber.DecodeString(f.Children[0].Data.Bytes()))
		value := ber.DecodeString(f.Children[1].Data.Bytes())
		if attr == "objectguid" {
			return slices.Contains(e.Attrs[attr], value)
		}
		return e.has(attr, value)
	case ldap.FilterPresent:
		return len(e.Attrs[strings.ToLower(ber.DecodeString(f.Data.Bytes()))]) > 0
	}
	return false
}

func hasControl(controls []gldap.Control, oid string) bool {
	return slices.ContainsFunc(controls, func(c gldap.Control) bool { return c.GetControlType() == oid })
}

// del deletes a computer object; its children go only with the tree delete control.
func (d *Directory) del(r *gldap.Request) (int, string) {
	m, err := r.GetDeleteMessage()
	if err != nil {
		return gldap.ResultProtocolError, err.Error()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	u := d.bound[r.ConnectionID()]
	e := d.entries[strings.ToLower(m.DN)]
	switch {
	case u == nil:
		return gldap.ResultOperationsError, "a successful bind must be completed"
	case e == nil:
		return gldap.ResultNoSuchObject, "0000208D: NameErr: DSID-03100288, problem 2001 (NO_OBJECT)"
	case !e.has("objectcategory", "computer") || !under(e.DN, u.DeleteOUs):
		return gldap.ResultInsufficientAccessRights, "00000005: SecErr: DSID-03152E29, problem 4003 (INSUFF_ACCESS_RIGHTS)"
	}
	var subtree []string
	for k := range d.entries {
		if strings.HasSuffix(k, ","+strings.ToLower(m.DN)) {
			subtree = append(subtree, k)
		}
	}
	if len(subtree) > 0 && !hasControl(m.Controls, treeDeleteOID) {
		return gldap.ResultNotAllowedOnNonLeaf, "00002015: UpdErr: DSID-031B0DE0, problem 6003 (CANT_ON_NON_LEAF)"
	}
	for _, k := range append(subtree, strings.ToLower(m.DN)) {
		delete(d.entries, k)
	}
	for _, g := range e.Attrs["memberof"] { // member is linked: the account leaves its groups
		if ge := d.entries[strings.ToLower(g)]; ge != nil {
			ge.Attrs["member"] = slices.DeleteFunc(ge.Attrs["member"], func(v string) bool { return strings.EqualFold(v, e.DN) })
		}
	}
	return gldap.ResultSuccess, ""
}

// modify changes a group's members (the only change capwin makes).
func (d *Directory) modify(r *gldap.Request) (int, string) {
	m, err := r.GetModifyMessage()
	if err != nil {
		return gldap.ResultProtocolError, err.Error()
	}
	permissive := hasControl(m.Controls, permissiveModifyOID)
	d.mu.Lock()
	defer d.mu.Unlock()
	u := d.bound[r.ConnectionID()]
	g := d.entries[strings.ToLower(m.DN)]
	switch {
	case u == nil:
		return gldap.ResultOperationsError, "a successful bind must be completed"
	case g == nil:
		return gldap.ResultNoSuchObject, "0000208D: NameErr: DSID-03100288, problem 2001 (NO_OBJECT)"
	case !slices.ContainsFunc(u.WriteMembers, func(x string) bool { return strings.EqualFold(x, g.DN) }):
		return gldap.ResultInsufficientAccessRights, "00000005: SecErr: DSID-03152E29, problem 4003 (INSUFF_ACCESS_RIGHTS)"
	}
	for _, c := range m.Changes {
		if !strings.EqualFold(c.Modification.Type, "member") {
			return gldap.ResultInsufficientAccessRights, "only member is writable here"
		}
		for _, v := range setValues(c.Modification.Vals) {
			if code, msg := d.changeMember(g, v, c.Operation, permissive); code != gldap.ResultSuccess {
				return code, msg
			}
		}
	}
	return gldap.ResultSuccess, ""
}

// setValues decodes a modification's values: gldap v0.1.14 hands over each value set's raw BER
// (tag, length and value of every octet string) instead of the values.
func setValues(raw []string) []string {
	var out []string
	for _, r := range raw {
		rd := bytes.NewReader([]byte(r))
		for rd.Len() > 0 {
			p, err := ber.ReadPacket(rd)
			if err != nil {
				return append(out, r) // not BER: a fixed gldap, which hands over the value itself
			}
			out = append(out, p.Data.String())
		}
	}
	return out
}

func (d *Directory) changeMember(g *Entry, member string, op int64, permissive bool) (int, string) {
	me := d.entries[strings.ToLower(member)]
	if me == nil {
		return gldap.ResultNoSuchObject, "0000208D: NameErr: DSID-03100288, problem 2001 (NO_OBJECT)"
	}
	present := g.has("member", me.DN)
	switch {
	case op == gldap.AddAttribute && present, op == gldap.DeleteAttribute && !present:
		if permissive {
			return gldap.ResultSuccess, ""
		}
		if present {
			return gldap.ResultAttributeOrValueExists, "00002083: AtrErr: DSID-03151904, #1: 0: 00002083: DSID-03151904, problem 1006 (ATT_OR_VALUE_EXISTS)"
		}
		return gldap.ResultNoSuchAttribute, "00002077: SvcErr: DSID-031A124A, problem 5003 (WILL_NOT_PERFORM)"
	case op == gldap.AddAttribute:
		g.Attrs["member"] = append(g.Attrs["member"], me.DN)
		me.Attrs["memberof"] = append(me.Attrs["memberof"], g.DN)
	case op == gldap.DeleteAttribute:
		g.Attrs["member"] = slices.DeleteFunc(g.Attrs["member"], func(v string) bool { return strings.EqualFold(v, me.DN) })
		me.Attrs["memberof"] = slices.DeleteFunc(me.Attrs["memberof"], func(v string) bool { return strings.EqualFold(v, g.DN) })
	default:
		return gldap.ResultUnwillingToPerform, "only add and delete of member"
	}
	return gldap.ResultSuccess, ""
}
