package remoting

import (
	"strconv"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// DefaultVersion is stamped on commands this package creates: the 4.9.4
// protocol level, so peers that key JSON dialects on version get standard JSON.
const DefaultVersion = protocol.VersionV4_9_4

// Flag bits of the header's flag field.
const (
	FlagResponse int32 = 1 << 0 // the command is a response
	FlagOneway   int32 = 1 << 1 // the request wants no response
)

// SerializeType is the header encoding announced in a frame's top header-length byte.
type SerializeType uint8

const (
	SerializeJSON     SerializeType = 0
	SerializeRocketMQ SerializeType = 1
)

func (t SerializeType) String() string {
	switch t {
	case SerializeJSON:
		return "JSON"
	case SerializeRocketMQ:
		return "ROCKETMQ"
	}
	return "SerializeType(" + strconv.Itoa(int(t)) + ")"
}

// Language is the sender's implementation (LanguageCode.java); one byte in the
// binary header, its name in the JSON header.
type Language uint8

const (
	LanguageJava   Language = 0
	LanguageCPP    Language = 1
	LanguageDotNet Language = 2
	LanguagePython Language = 3
	LanguageDelphi Language = 4
	LanguageErlang Language = 5
	LanguageRuby   Language = 6
	LanguageOther  Language = 7
	LanguageHTTP   Language = 8
	LanguageGo     Language = 9
	LanguagePHP    Language = 10
	LanguageOMS    Language = 11
	LanguageRust   Language = 12
	LanguageNodeJS Language = 13
)

var languageNames = [...]string{"JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER",
	"HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS"}

// String returns the JSON name; values without a name are "OTHER".
func (l Language) String() string {
	if int(l) < len(languageNames) {
		return languageNames[l]
	}
	return "OTHER"
}

// languageByName maps a JSON name to its code; unknown names are LanguageOther.
func languageByName(name string) Language {
	for i, n := range languageNames {
		if n == name {
			return Language(i)
		}
	}
	return LanguageOther
}

// languageByNumber maps a numeric JSON language to its code; numbers without a
// name are LanguageOther, so JSON decode → encode → decode is stable.
func languageByNumber(n int64) Language {
	if n >= 0 && n < int64(len(languageNames)) {
		return Language(n)
	}
	return LanguageOther
}
