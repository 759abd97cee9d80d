import RelayTestSupport
import Testing

@Suite("Slack signer (test support)")
struct SlackSignerTests {
    /// The worked example in Slack's "Verifying requests from Slack".
    @Test func matchesSlacksWorkedExample() {
        let example = SlackPayloads.signedSlashCommand()
        let signer = SlackSigner(signingSecret: example.signingSecret)
        #expect(signer.signature(body: example.body, timestamp: example.timestamp) == example.signature)
        let headers = signer.headers(body: example.body, timestamp: example.timestamp)
        #expect(headers["X-Slack-Request-Timestamp"] == "1531420618")
        #expect(headers["X-Slack-Signature"] == "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503")
    }

    @Test func signsTheExactBytesAndTimestamp() throws {
        let signer = SlackSigner(signingSecret: "secret")
        let body = SlackPayloads.body(SlackPayloads.appMention())
        // Signed now by default: at a second between the two readings of the clock.
        let before = SlackSigner.now()
        let headers = signer.headers(body: body)
        let after = SlackSigner.now()
        let timestamp = try #require(headers["X-Slack-Request-Timestamp"].flatMap { Int($0) })
        #expect((before...after).contains(timestamp))
        #expect(signer.signature(body: body, timestamp: 1) != signer.signature(body: body + " ", timestamp: 1))
        #expect(signer.signature(body: body, timestamp: 1) != signer.signature(body: body, timestamp: 2))
        #expect(signer.signature(body: Array(body.utf8), timestamp: 5) == signer.signature(body: body, timestamp: 5))
    }
}
