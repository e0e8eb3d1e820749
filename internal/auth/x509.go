package auth

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"strings"
)

// ExternalDB is the database of the users whose credentials live outside
// MongoDB, such as the subjects of X.509 client certificates.
const ExternalDB = "$external"

// X509 is the mechanism that authenticates a client by its certificate.
const X509 = "MONGODB-X509"

// SubjectName is a certificate subject as MongoDB names the $external
// user it maps to (RFC 2253): the RDNs last to first, separated by
// commas, the attributes of a multi-valued RDN by "+", each type by
// OpenSSL's short name (or its dotted OID), each value escaped.
func SubjectName(rdns pkix.RDNSequence) string {
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if i < len(rdns)-1 {
			b.WriteByte(',')
		}
		for j, atv := range rdns[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			b.WriteString(oidShortName(atv.Type))
			b.WriteByte('=')
			writeRFC2253Value(&b, atv.Value)
		}
	}
	return b.String()
}

// oidShortNames are OpenSSL's short names of the attribute types found in
// subjects, which MongoDB's subject names use.
var oidShortNames = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.4":                    "SN",
	"2.5.4.5":                    "serialNumber",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.9":                    "street",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.12":                   "title",
	"2.5.4.15":                   "businessCategory",
	"2.5.4.17":                   "postalCode",
	"2.5.4.41":                   "name",
	"2.5.4.42":                   "GN",
	"2.5.4.43":                   "initials",
	"2.5.4.44":                   "generationQualifier",
	"2.5.4.46":                   "dnQualifier",
	"2.5.4.65":                   "pseudonym",
	"0.9.2342.19200300.100.1.1":  "UID",
	"0.9.2342.19200300.100.1.25": "DC",
	"1.2.840.113549.1.9.1":       "emailAddress",
}

func oidShortName(oid asn1.ObjectIdentifier) string {
	s := oid.String()
	if n, ok := oidShortNames[s]; ok {
		return n
	}
	return s
}

// writeRFC2253Value writes an attribute value escaped as RFC 2253
// section 2.4 asks: ",+\"\\<>;" anywhere, "#" or a space in front, a
// space at the end. A value that is not a string is written as "#" and
// the hex of its DER encoding.
func writeRFC2253Value(b *strings.Builder, v any) {
	s, ok := v.(string)
	if !ok {
		der, err := asn1.Marshal(v)
		if err != nil {
			fmt.Fprint(b, v)
			return
		}
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(der))
		return
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte(",+\"\\<>;", c) >= 0,
			i == 0 && (c == '#' || c == ' '),
			i == len(s)-1 && c == ' ':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
}
