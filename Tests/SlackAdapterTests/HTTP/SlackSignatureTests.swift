import Foundation
import Hummingbird
import HummingbirdTesting
import RelayTestSupport
import SlackAdapter
import Testing

/// Slack's published example ("Verifying requests from Slack"), checked with Python's hmac
/// before it was put here.
enum PublishedSlackExample {
    static let signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"
    static let timestamp = "1531420618"
    static let body =
        "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    static let signature = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
}

@Suite("Slack request signatures")
struct SlackSignatureTests {
    typealias Example = PublishedSlackExample

    /// A verifier whose clock reads `offset` seconds after the example's timestamp.
    func verifier(offset: Int = 0, secret: String = Example.signingSecret) -> SlackRequestVerifier {
        let now = Date(timeIntervalSince1970: Double(Int(Example.timestamp)! + offset))
        return SlackRequestVerifier(signingSecret: secret, now: { now })
    }

    func verify(_ verifier: SlackRequestVerifier, timestamp: String? = Example.timestamp, signature: String? = Example.signature, body: [UInt8] = Array(Example.body.utf8)) -> SlackVerificationError? {
        do throws(SlackVerificationError) {
            try verifier.verify(timestamp: timestamp, signature: signature, body: body)
            return nil
        } catch {
            return error
        }
    }

    @Test func thePublishedExampleVerifies() {
        #expect(verify(verifier()) == nil)
    }

    @Test func theReplayWindowIsFiveMinutesEitherWay() {
        #expect(verify(verifier(offset: 299)) == nil)
        #expect(verify(verifier(offset: 300)) == nil)
        #expect(verify(verifier(offset: 301)) == .staleTimestamp(secondsOld: 301))
        #expect(verify(verifier(offset: -299)) == nil)
        #expect(verify(verifier(offset: -600)) == .futureTimestamp(secondsAhead: 600))
    }

    @Test func oneFlippedBodyByteFails() {
        var body = Array(Example.body.utf8)
        for index in [0, body.count / 2, body.count - 1] {
            let original = body[index]
            body[index] ^= 0x01
            #expect(verify(verifier(), body: body) == .signatureMismatch)
            body[index] = original
        }
        #expect(verify(verifier(), body: body) == nil)
        #expect(verify(verifier(), body: body + [UInt8(ascii: "&")]) == .signatureMismatch)
    }

    @Test func anotherSecretOrTimestampFails() {
        #expect(verify(verifier(secret: "8f742231b10e8888abcd99yyyzzz85a6")) == .signatureMismatch)
        // The timestamp is signed too: moving it within the window does not help.
        #expect(verify(verifier(), timestamp: "1531420619") == .signatureMismatch)
    }

    @Test func missingOrMalformedHeadersFail() {
        let verifier = verifier()
        #expect(verify(verifier, timestamp: nil) == .missingTimestamp)
        #expect(verify(verifier, signature: nil) == .missingSignature)
        for timestamp in ["", "abc", "-1531420618", "+1531420618", " 1531420618", "1531420618.5", "99999999999999999999"] {
            #expect(verify(verifier, timestamp: timestamp) == .malformedTimestamp, "\(timestamp)")
        }
        let hex = String(Example.signature.dropFirst(3))
        for signature in ["", hex, "v1=" + hex, "v0=" + hex.dropLast(), "v0=" + hex + "0", "v0=" + hex.dropLast() + "g"] {
            #expect(verify(verifier, signature: signature) == .malformedSignature, "\(signature)")
        }
        #expect(verify(verifier, signature: "v0=" + hex.uppercased()) == nil)
    }

    @Test func verifiesFromHeadersAndABuffer() throws {
        let headers: HTTPFields = [
            SlackHeaders.requestTimestamp: Example.timestamp, SlackHeaders.signature: Example.signature,
        ]
        try verifier().verify(headers: headers, body: ByteBuffer(string: Example.body))
        #expect(throws: SlackVerificationError.missingSignature) {
            try verifier().verify(headers: [SlackHeaders.requestTimestamp: Example.timestamp], body: ByteBuffer(string: Example.body))
        }
    }

    @Test func errorsNeverContainTheSecretOrTheSignature() {
        let all: [SlackVerificationError] = [
            .missingTimestamp, .malformedTimestamp, .missingSignature, .malformedSignature, .staleTimestamp(secondsOld: 400),
            .futureTimestamp(secondsAhead: 600), .signatureMismatch,
        ]
        for error in all {
            #expect(!error.description.contains(Example.signingSecret))
            #expect(!error.description.contains("a2114d57"))
            #expect(error.status == .unauthorized)
        }
        #expect(!"\(verifier())".contains(Example.signingSecret))
        #expect(!String(reflecting: verifier()).contains(Example.signingSecret))
    }

    /// What a Slack route does: verify the raw body, then decode it. Thrown errors answer for
    /// themselves: 401 for a bad signature, 400 for a bad body.
    @Test func inARouteFailuresSurfaceAs401And400() async throws {
        let verifier = verifier(offset: 10)
        let router = Router()
        router.post("/slack/commands") { request, _ -> String in
            let body = try await request.body.collect(upTo: 1 << 20)
            try verifier.verify(headers: request.headers, body: body)
            return try SlackSlashCommand.decode(form: body.readableBytesView).commandLine()
        }
        let app = Application(router: router)
        try await app.test(.router) { client in
            func post(_ body: String, signature: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/slack/commands", method: .post,
                    headers: [SlackHeaders.requestTimestamp: Example.timestamp, SlackHeaders.signature: signature],
                    body: ByteBuffer(string: body))
            }
            let good = try await post(Example.body, signature: Example.signature)
            #expect(good.status == .ok)
            #expect(String(buffer: good.body) == "/webhook-collect")

            let forged = try await post(Example.body.replacingOccurrences(of: "roadrunner", with: "coyote"), signature: Example.signature)
            #expect(forged.status == .unauthorized)
            #expect(String(buffer: forged.body) == #"{"error":"invalid request"}"#)

            let broken = "team_id=T1&user_id=U1"
            let signed = try await post(broken, signature: SlackSigner(signingSecret: Example.signingSecret).signature(body: broken, timestamp: Int(Example.timestamp)!))
            #expect(signed.status == .badRequest)
            #expect(String(buffer: signed.body).contains("missing field `channel_id`"))
            #expect(signed.headers[values: SlackHeaders.noRetry] == ["1"])
        }
    }
}
