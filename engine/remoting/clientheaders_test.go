package remoting

import (
	"maps"
	"testing"
)

// TestHeadersAsOtherClientsWriteThem decodes headers in the shapes RocketMQ
// clients other than the official Go one put on the wire: numbers and
// booleans as extFields values (JSON serializers of typed header structs),
// null for unset optional fields, members the Java RemotingCommand carries
// (serializeTypeCurrentRPC, and fields this package does not model),
// numeric language and code given as a string. Each must decode with the
// values the Java broker would see, as text, and no header error.
func TestHeadersAsOtherClientsWriteThem(t *testing.T) {
	cases := []struct {
		name   string
		header string
		code   int32
		opaque int32
		flag   int32
		lang   Language
		ext    ExtFields
	}{
		{
			name: "java fastjson (all strings, sorted keys)",
			header: `{"code":17,"extFields":{"defaultTopic":"TBW102","order":"false","perm":"6","readQueueNums":"8",` +
				`"topic":"T","topicFilterType":"SINGLE_TAG","topicSysFlag":"0","writeQueueNums":"8"},"flag":0,` +
				`"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":475}`,
			code: 17, opaque: 7, lang: LanguageJava,
			ext: ExtFields{"defaultTopic": "TBW102", "order": "false", "perm": "6", "readQueueNums": "8", "topic": "T",
				"topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "writeQueueNums": "8"},
		},
		{
			name: "typed struct serializer: numbers and booleans",
			header: `{"code":17,"language":"RUST","version":500,"opaque":3,"flag":0,"remark":null,` +
				`"extFields":{"topic":"T","readQueueNums":8,"writeQueueNums":8,"perm":6,"topicSysFlag":0,"order":false}}`,
			code: 17, opaque: 3, lang: LanguageRust,
			ext: ExtFields{"topic": "T", "readQueueNums": "8", "writeQueueNums": "8", "perm": "6", "topicSysFlag": "0", "order": "false"},
		},
		{
			name: "send v2 with numeric queue and int64 timestamp, unit mode false",
			header: `{"code":310,"language":"CPP","version":399,"opaque":11,"flag":0,"extFields":{"a":"pg","b":"T","c":"TBW102",` +
				`"d":4,"e":3,"f":0,"g":1700000000123,"h":0,"i":"","j":0,"k":false,"l":16,"m":false}}`,
			code: 310, opaque: 11, lang: LanguageCPP,
			ext: ExtFields{"a": "pg", "b": "T", "c": "TBW102", "d": "4", "e": "3", "f": "0", "g": "1700000000123", "h": "0",
				"i": "", "j": "0", "k": "false", "l": "16", "m": "false"},
		},
		{
			name:   "pull with negative commit offset, null subscription, true flags",
			header: `{"code":11,"language":"PYTHON","opaque":-5,"flag":0,"extFields":{"consumerGroup":"g","topic":"T","queueId":1,"queueOffset":0,"maxMsgNums":32,"sysFlag":3,"commitOffset":-1,"suspendTimeoutMillis":20000,"subscription":null,"subVersion":0,"expressionType":"TAG","lite":true}}`,
			code:   11, opaque: -5, lang: LanguagePython,
			ext: ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "1", "queueOffset": "0", "maxMsgNums": "32", "sysFlag": "3",
				"commitOffset": "-1", "suspendTimeoutMillis": "20000", "subVersion": "0", "expressionType": "TAG", "lite": "true"},
		},
		{
			name:   "numbers keep their literal text",
			header: `{"code":"14","language":9,"opaque":"2","flag":"0","extFields":{"x":1e3,"y":-0,"z":2.50}}`,
			code:   14, opaque: 2, lang: LanguageGo,
			ext: ExtFields{"x": "1e3", "y": "-0", "z": "2.50"},
		},
		{
			name:   "unknown members of every type are ignored",
			header: `{"code":34,"opaque":1,"flag":2,"serializeTypeCurrentRPC":"JSON","customHeader":{"a":[1,{"b":null}]},"suspended":false,"extFields":{}}`,
			code:   34, opaque: 1, flag: FlagOneway, lang: LanguageJava,
			ext: ExtFields{},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd, err := DecodeHeader([]byte(c.header), SerializeJSON)
			if err != nil {
				t.Fatal(err)
			}
			if cmd.HeaderErr() != nil {
				t.Fatalf("header error: %v", cmd.HeaderErr())
			}
			if cmd.Code != c.code || cmd.Opaque != c.opaque || cmd.Flag != c.flag || cmd.Language != c.lang ||
				!maps.Equal(cmd.ExtFields, c.ext) {
				t.Fatalf("decoded code=%d opaque=%d flag=%d lang=%v ext=%v", cmd.Code, cmd.Opaque, cmd.Flag, cmd.Language, cmd.ExtFields)
			}
			// Typed getters see what the Java header classes would.
			if v, ok := c.ext["readQueueNums"]; ok {
				if n, err := cmd.ExtFields.Int32("readQueueNums"); err != nil || itoa32(n) != v {
					t.Fatalf("readQueueNums %d %v", n, err)
				}
			}
			// Both encodings carry the decoded command unchanged.
			for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
				frame, err := AppendFrame(nil, cmd, st)
				if err != nil {
					t.Fatal(err)
				}
				again, _, err := DecodeFrame(frame, 0)
				if err != nil || !sameCommand(cmd, again) {
					t.Fatalf("%v round trip: %v %+v", st, err, again)
				}
			}
		})
	}
}
