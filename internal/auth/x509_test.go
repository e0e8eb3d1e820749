package auth

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"
)

// TestSubjectName formats subjects as MongoDB names X.509 users (manual,
// "Use x.509 Certificates to Authenticate Clients": the RFC 2253 string,
// e.g. CN=myName,OU=myOrgUnit,O=myOrg,L=myLocality,ST=myState,C=myCountry).
func TestSubjectName(t *testing.T) {
	email := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	unknown := asn1.ObjectIdentifier{1, 2, 3, 4}
	cases := []struct {
		name pkix.Name
		want string
	}{
		{pkix.Name{CommonName: "client"}, "CN=client"},
		{pkix.Name{
			Country: []string{"US"}, Province: []string{"New York"}, Locality: []string{"New York City"},
			Organization: []string{"MongoDB"}, OrganizationalUnit: []string{"KernelUser"}, CommonName: "client",
		}, "CN=client,OU=KernelUser,O=MongoDB,L=New York City,ST=New York,C=US"},
		{pkix.Name{CommonName: "a,b+c\"d\\e<f>g;h"}, `CN=a\,b\+c\"d\\e\<f\>g\;h`},
		{pkix.Name{CommonName: " #lead and trail "}, `CN=\ #lead and trail\ `},
		{pkix.Name{CommonName: "#x"}, `CN=\#x`},
		{pkix.Name{CommonName: "x", ExtraNames: []pkix.AttributeTypeAndValue{{Type: email, Value: "x@example.com"}}}, "emailAddress=x@example.com,CN=x"},
		{pkix.Name{CommonName: "x", ExtraNames: []pkix.AttributeTypeAndValue{{Type: unknown, Value: "v"}}}, "1.2.3.4=v,CN=x"},
	}
	for _, c := range cases {
		if got := SubjectName(c.name.ToRDNSequence()); got != c.want {
			t.Errorf("SubjectName(%v) = %q, want %q", c.name, got, c.want)
		}
	}
	multi := pkix.RDNSequence{
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: "O"}},
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "a"}, {Type: asn1.ObjectIdentifier{2, 5, 4, 11}, Value: "b"}},
	}
	if got, want := SubjectName(multi), "CN=a+OU=b,O=O"; got != want {
		t.Errorf("multi-valued RDN: %q, want %q", got, want)
	}
}
