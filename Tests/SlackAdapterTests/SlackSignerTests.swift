import RelayTestSupport
import Testing

@Suite("Slack signer (test support)")
struct SlackSignerTests {
    /// The worked example in Slack's "Verifying requests from Slack".
    @Test func matchesSlacksWorkedExample() {
        let signer = SlackSigner(signingSecret: "8f742231b10e8888abcd99yyyzzz85a5")
        let body =
            "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
        #expect(
            signer.signature(body: body, timestamp: 1_531_420_618)
                == "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503")
        let headers = signer.headers(body: body, timestamp: 1_531_420_618)
        #expect(headers["X-Slack-Request-Timestamp"] == "1531420618")
        #expect(headers["X-Slack-Signature"] == "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503")
    }

    @Test func signsTheExactBytesAndTimestamp() {
        let signer = SlackSigner(signingSecret: "secret")
        let body = #"{"type":"event_callback"}"#
        let now = SlackSigner.now()
        let headers = signer.headers(body: body)
        #expect(abs((Int(headers["X-Slack-Request-Timestamp"] ?? "") ?? 0) - now) <= 1)
        #expect(signer.signature(body: body, timestamp: 1) != signer.signature(body: body + " ", timestamp: 1))
        #expect(signer.signature(body: body, timestamp: 1) != signer.signature(body: body, timestamp: 2))
        #expect(signer.signature(body: Array(body.utf8), timestamp: 5) == signer.signature(body: body, timestamp: 5))
    }
}
