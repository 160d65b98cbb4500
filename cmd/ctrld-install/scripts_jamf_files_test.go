//go:build unix

package main

// The ready files for Jamf Pro (extension attribute templates, the smart
// group, the two policies) and the managed login items profile agree with
// the scripts and with each other, and carry no secret.

import (
	"encoding/xml"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decodeXML(t *testing.T, rel string, v any) string {
	t.Helper()
	b, err := os.ReadFile(scriptPath(t, rel))
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(b, v), rel)
	return string(b)
}

type jamfEA struct {
	DisplayName string `xml:"displayName"`
	DataType    string `xml:"dataType"`
	Script      string `xml:"scriptContentsMac"`
}

type jamfGroup struct {
	Name     string `xml:"name"`
	IsSmart  bool   `xml:"is_smart"`
	Criteria []struct {
		Name       string `xml:"name"`
		SearchType string `xml:"search_type"`
		Value      string `xml:"value"`
	} `xml:"criteria>criterion"`
}

type jamfPolicy struct {
	Frequency  string   `xml:"general>frequency"`
	Checkin    bool     `xml:"general>trigger_checkin"`
	Enrollment bool     `xml:"general>trigger_enrollment_complete"`
	All        bool     `xml:"scope>all_computers"`
	Groups     []string `xml:"scope>computer_groups>computer_group>name"`
	Excluded   []string `xml:"scope>exclusions>computer_groups>computer_group>name"`
	Scripts    []struct {
		Name   string `xml:"name"`
		Param4 string `xml:"parameter4"`
		Param6 string `xml:"parameter6"`
	} `xml:"scripts>script"`
	Recon bool `xml:"maintenance>recon"`
}

func TestScriptsJamfReadyFiles(t *testing.T) {
	t.Parallel()
	eas := map[string]string{}
	for file, script := range map[string]string{
		"jamf/ea-ctrld-state.xml":          "jamf/extension-attribute-verify.sh",
		"jamf/ea-ctrld-install-result.xml": "jamf/extension-attribute.sh",
	} {
		var ea jamfEA
		decodeXML(t, file, &ea)
		assert.Equal(t, "string", ea.DataType, file)
		assert.Equal(t, readScript(t, script), ea.Script, "%s holds %s as it is", file, script)
		eas[ea.DisplayName] = script
	}

	var group jamfGroup
	decodeXML(t, "jamf/group-ctrld-not-provisioned.xml", &group)
	assert.True(t, group.IsSmart)
	require.Len(t, group.Criteria, 1)
	c := group.Criteria[0]
	script, ok := eas[c.Name]
	require.True(t, ok, "the group's criterion %q is one of the attributes", c.Name)
	assert.Equal(t, "jamf/extension-attribute-verify.sh", script, "the group follows the state now, not the last run")
	assert.Equal(t, "is", c.SearchType)
	assert.Contains(t, readScript(t, script), "word="+c.Value, "the attribute prints %s", c.Value)

	var first, daily jamfPolicy
	firstSrc := decodeXML(t, "jamf/policy-first-install.xml", &first)
	dailySrc := decodeXML(t, "jamf/policy-daily.xml", &daily)

	assert.Equal(t, "Once per computer", first.Frequency)
	assert.True(t, first.Checkin && first.Enrollment)
	assert.Equal(t, []string{group.Name}, first.Groups)
	assert.True(t, first.Recon, "one inventory after the first install, so the Mac leaves the group")

	// The daily policy: at most once a day per Mac, whatever fails, and no
	// inventory in the loop.
	assert.Equal(t, "Once every day", daily.Frequency)
	assert.True(t, daily.Checkin)
	assert.True(t, daily.All)
	assert.Equal(t, []string{group.Name}, daily.Excluded)
	assert.False(t, daily.Recon)

	for name, p := range map[string]jamfPolicy{"first install": first, "daily": daily} {
		require.Len(t, p.Scripts, 1, name)
		assert.Equal(t, "ctrld-install policy.sh", p.Scripts[0].Name, name)
		assert.Empty(t, p.Scripts[0].Param4, "%s: the token goes in the console, never in a file", name)
		assert.Equal(t, "exit-profile=jamf", p.Scripts[0].Param6, name)
	}
	for _, src := range []string{firstSrc, dailySrc} {
		assert.NotContains(t, src, "Ongoing", "no policy runs at every check-in")
	}
}

// The managed login items profile, whole, for any MDM.
func TestScriptsLoginItemsProfile(t *testing.T) {
	t.Parallel()
	src := readScript(t, "jamf/ctrld-login-items.mobileconfig")
	var any struct{ XMLName xml.Name }
	require.NoError(t, xml.Unmarshal([]byte(src), &any))
	assert.Equal(t, "plist", any.XMLName.Local)
	compact := regexp.MustCompile(`>\s+<`).ReplaceAllString(src, "><")
	for _, kv := range []string{
		"<key>PayloadType</key><string>com.apple.servicemanagement</string>",
		"<key>RuleType</key><string>Label</string><key>RuleValue</key><string>ctrld</string>",
		"<key>PayloadType</key><string>Configuration</string>",
		"<key>PayloadScope</key><string>System</string>",
	} {
		assert.Contains(t, compact, kv)
	}
	uuids := regexp.MustCompile(`<key>PayloadUUID</key><string>([0-9a-f-]{36})</string>`).FindAllStringSubmatch(compact, -1)
	require.Len(t, uuids, 2)
	assert.NotEqual(t, uuids[0][1], uuids[1][1])
	assert.False(t, strings.Contains(src, "REPLACE"), "ready to upload as it is")
}
