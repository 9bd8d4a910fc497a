package lint

import (
	"encoding/json"
	"path/filepath"

	"github.com/agent-ls/agent-ls/schema"
)

// SARIFSchemaURI is the $schema of the SARIF logs SARIF writes.
const SARIFSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// FileFinding is a finding of one file, for reports that span files.
type FileFinding struct {
	File string
	Finding
}

// SARIFLevel maps a severity to a SARIF result level: info and hint are
// notes.
func SARIFLevel(severity string) string {
	switch severity {
	case schema.SeverityError:
		return "error"
	case schema.SeverityWarning:
		return "warning"
	}
	return "note"
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string      `json:"id"`
	ShortDescription     sarifText   `json:"shortDescription"`
	DefaultConfiguration sarifConfig `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID     string            `json:"ruleId"`
	RuleIndex  int               `json:"ruleIndex"`
	Level      string            `json:"level"`
	Message    sarifText         `json:"message"`
	Locations  []sarifLocation   `json:"locations"`
	Properties map[string]string `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine"`
	EndColumn   int `json:"endColumn"`
}

// SARIF encodes findings as a SARIF 2.1.0 log with one run of the agent-ls
// tool: every rule (plus "parse") in the driver, one result per finding
// with its 1-based region (columns in UTF-16 code units, SARIF's default).
// File names become forward-slash URIs relative to the caller's directory.
func SARIF(findings []FileFinding, toolVersion string) ([]byte, error) {
	infos := append([]RuleInfo{{ID: schema.RuleParse, Doc: "the file is not well-formed YAML or JSON", DefaultSeverity: schema.SeverityError}}, Rules()...)
	index := map[string]int{}
	drv := sarifDriver{Name: "agent-ls", Version: toolVersion, InformationURI: "https://agent-ls.dev", Rules: []sarifRule{}}
	for i, r := range infos {
		index[r.ID] = i
		drv.Rules = append(drv.Rules, sarifRule{ID: r.ID, ShortDescription: sarifText{r.Doc}, DefaultConfiguration: sarifConfig{SARIFLevel(r.DefaultSeverity)}})
	}
	results := []sarifResult{}
	for _, f := range findings {
		i, ok := index[f.Rule]
		if !ok {
			i = len(drv.Rules)
			index[f.Rule] = i
			drv.Rules = append(drv.Rules, sarifRule{ID: f.Rule, ShortDescription: sarifText{f.Rule}, DefaultConfiguration: sarifConfig{"warning"}})
		}
		r := f.Range
		res := sarifResult{RuleID: f.Rule, RuleIndex: i, Level: SARIFLevel(f.Severity), Message: sarifText{f.Message},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: sarifArtifact{URI: filepath.ToSlash(f.File)},
				Region: sarifRegion{StartLine: r.Start.Line + 1, StartColumn: r.Start.Character + 1,
					EndLine: max(r.End.Line, r.Start.Line) + 1, EndColumn: r.End.Character + 1},
			}}}}
		if r.End.Line < r.Start.Line || (r.End.Line == r.Start.Line && r.End.Character < r.Start.Character) {
			res.Locations[0].PhysicalLocation.Region.EndLine = res.Locations[0].PhysicalLocation.Region.StartLine
			res.Locations[0].PhysicalLocation.Region.EndColumn = res.Locations[0].PhysicalLocation.Region.StartColumn
		}
		if f.Severity != SeverityOff && f.Severity != schema.SeverityError && f.Severity != schema.SeverityWarning {
			res.Properties = map[string]string{"severity": f.Severity}
		}
		if f.Pointer != "" {
			if res.Properties == nil {
				res.Properties = map[string]string{}
			}
			res.Properties["pointer"] = f.Pointer
		}
		results = append(results, res)
	}
	return json.MarshalIndent(sarifLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: []sarifRun{{Tool: sarifTool{drv}, Results: results}}}, "", "  ")
}
