package collation

import "strings"

// locales are the locale IDs MongoDB 7.0 accepts (its manual's "Supported
// Languages and Locales", the variants written with "@collation=" aside),
// each with the attributes its ICU tailoring changes from the root
// defaults.
var locales = map[string]Spec{}

func init() {
	ids := "af am ar as az be bg bn bo bs bs_Cyrl ca chr cs cy da de de_AT dsb dz ee el en en_US en_US_POSIX " +
		"eo es et fa fa_AF fi fil fo fr fr_CA ga gl gu ha haw he hi hr hsb hu hy id ig is it ja ka kk kl km " +
		"kn ko kok ky lb lkt ln lo lt lv mk ml mn mr ms mt my nb ne nl nn om or pa pl ps pt ro ru se si sk " +
		"sl smn sq sr sr_Latn sv sw ta te th to tr ug uk ur vi wae yi yo zh zh_Hant zu"
	for _, id := range strings.Fields("as bn bo el fa fa_AF gu he hi ig km kn kok mr my or pa ps si ta te th vi yi yo") {
		normalizing[id] = true
	}
	for _, id := range strings.Fields(ids) {
		locales[id] = defaults(id)
	}
}

// defaults is the collation ICU builds for a locale before the document's
// options apply: the root settings, except where the locale's tailoring
// sets an attribute (read from ICU 72's collators): French Canadian sorts
// accents backwards, Danish and Maltese put upper case first, Thai makes
// spaces and punctuation variable, and the locales of scripts with
// combining characters normalize.
func defaults(id string) Spec {
	s := Spec{Locale: id, CaseFirst: "off", Strength: 3, Alternate: "non-ignorable", MaxVariable: "punct"}
	switch id {
	case "fr_CA":
		s.Backwards = true
	case "da", "mt":
		s.CaseFirst = "upper"
	case "th":
		s.Alternate = "shifted"
	}
	s.Normalization = normalizing[id]
	return s
}

// normalizing are the locales whose collators normalize by default.
var normalizing = map[string]bool{}

// languageTag is the BCP 47 tag of a MongoDB (ICU) locale ID: "zh_Hant" is
// "zh-Hant", and en_US_POSIX is en-US with the POSIX variant.
func languageTag(id string) string {
	if id == "en_US_POSIX" {
		return "en-US-u-va-posix"
	}
	return strings.ReplaceAll(id, "_", "-")
}
