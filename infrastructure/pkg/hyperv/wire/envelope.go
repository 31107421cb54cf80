package wire

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"unicode/utf16"
)

// ResultPrefix marks the result line on stdout: capwin-result:<nonce>:<base64 of the document>.
// The nonce is new for every operation and known only to the runner, so output that reached
// stdout from elsewhere (a guest's answer, a module's chatter) cannot pass for the result.
const ResultPrefix = "capwin-result:"

// ResultLine is the result line of an operation run with nonce.
func ResultLine(nonce string, doc []byte) string {
	return ResultPrefix + nonce + ":" + base64.StdEncoding.EncodeToString(doc)
}

// RunnerCommand is the command line of every operation: Windows PowerShell running the runner,
// which reads the operation from stdin.
var RunnerCommand = RunnerCommandFor(Runner.Text)

// RunnerCommandFor is the command line that runs a runner script.
func RunnerCommandFor(runner string) string {
	return "powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand " + EncodeCommand(runner)
}

// EncodeCommand encodes a script for powershell.exe -EncodedCommand (base64 of UTF-16LE).
func EncodeCommand(script string) string {
	u := utf16.Encode([]rune(script))
	b := make([]byte, 2*len(u))
	for i, r := range u {
		binary.LittleEndian.PutUint16(b[2*i:], r)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Envelope is what the runner reads from stdin (base64 of this JSON).
type Envelope struct {
	Lib    string          `json:"lib"`
	Script string          `json:"script"`
	Input  json.RawMessage `json:"input"`
	// Nonce marks this operation's result line (ResultLine).
	Nonce string `json:"nonce"`
}

// Outcome is the document on the result line.
type Outcome struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}
