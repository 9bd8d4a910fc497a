package overlay

import (
	"strconv"
	"strings"
)

// Pointers name places in a composed config: RFC 6901 JSON Pointers into its
// camelCase JSON shape, e.g. /background/projectContext/deploy_window or
// /roleTemplate/judgments/0/heuristics/3. Lines of the recovery prompt (a
// string) extend the pointer with the 0-based line number:
// /roleTemplate/recovery/prompt/2.

// escapeToken escapes one reference token per RFC 6901.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func backgroundPtr(section string) string { return "/background/" + section }

func backgroundKeyPtr(section, key string) string {
	return "/background/" + section + "/" + escapeToken(key)
}

func judgmentSlotPtr(j int, slot string) string {
	return "/roleTemplate/judgments/" + strconv.Itoa(j) + "/" + slot
}

func indexPtr(list string, i int) string { return list + "/" + strconv.Itoa(i) }

func manualPtr(capability string) string {
	return "/manuals/" + escapeToken(capability) + "/workflows"
}

const (
	awarenessPtr      = "/awareness/domains"
	recoveryPtr       = "/roleTemplate/recovery"
	recoveryPromptPtr = "/roleTemplate/recovery/prompt"
)
