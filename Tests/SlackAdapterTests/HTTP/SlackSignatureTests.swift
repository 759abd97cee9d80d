import Foundation
import Hummingbird
import HummingbirdTesting
import RelayPlatform
import RelayTestSupport
import SlackAdapter
import Testing

@Suite("Slack request signatures")
struct SlackSignatureTests {
    /// Slack's worked example from "Verifying requests from Slack".
    static let example = SlackPayloads.signedSlashCommand()
    static let timestamp = String(example.timestamp)

    /// A verifier whose clock reads `offset` seconds after the example's timestamp.
    func verifier(offset: Int = 0, secret: String = Self.example.signingSecret) -> SlackRequestVerifier {
        let now = Date(timeIntervalSince1970: Double(Self.example.timestamp + offset))
        return SlackRequestVerifier(signingSecret: secret, now: { now })
    }

    func verify(
        _ verifier: SlackRequestVerifier, timestamp: String? = Self.timestamp, signature: String? = Self.example.signature,
        body: [UInt8] = Array(Self.example.body.utf8)
    ) -> SlackVerificationError? {
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
        var body = Array(Self.example.body.utf8)
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
        let hex = String(Self.example.signature.dropFirst(3))
        for signature in ["", hex, "v1=" + hex, "v0=" + hex.dropLast(), "v0=" + hex + "0", "v0=" + hex.dropLast() + "g"] {
            #expect(verify(verifier, signature: signature) == .malformedSignature, "\(signature)")
        }
        #expect(verify(verifier, signature: "v0=" + hex.uppercased()) == nil)
    }

    @Test func verifiesFromHeadersAndABuffer() throws {
        let headers: HTTPFields = [
            SlackHeaders.requestTimestamp: Self.timestamp, SlackHeaders.signature: Self.example.signature,
        ]
        try verifier().verify(headers: headers, body: ByteBuffer(string: Self.example.body))
        #expect(throws: SlackVerificationError.missingSignature) {
            try verifier().verify(headers: [SlackHeaders.requestTimestamp: Self.timestamp], body: ByteBuffer(string: Self.example.body))
        }
    }

    @Test func errorsNeverContainTheSecretOrTheSignature() {
        let all: [SlackVerificationError] = [
            .missingTimestamp, .malformedTimestamp, .missingSignature, .malformedSignature, .staleTimestamp(secondsOld: 400),
            .futureTimestamp(secondsAhead: 600), .signatureMismatch,
        ]
        for error in all {
            #expect(!error.description.contains(Self.example.signingSecret))
            #expect(!error.description.contains("a2114d57"))
            #expect(error.status == .unauthorized)
        }
        #expect(!"\(verifier())".contains(Self.example.signingSecret))
        #expect(!String(reflecting: verifier()).contains(Self.example.signingSecret))
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
                    headers: [SlackHeaders.requestTimestamp: Self.timestamp, SlackHeaders.signature: signature],
                    body: ByteBuffer(string: body))
            }
            let good = try await post(Self.example.body, signature: Self.example.signature)
            #expect(good.status == .ok)
            #expect(String(buffer: good.body) == "/webhook-collect")

            let forged = try await post(Self.example.body.replacingOccurrences(of: "roadrunner", with: "coyote"), signature: Self.example.signature)
            #expect(forged.status == .unauthorized)
            #expect(String(buffer: forged.body) == #"{"error":"invalid request"}"#)

            // Signed correctly, but a slash command without its channel.
            let broken = SlackPayloads.formEncode(SlackPayloads.slashCommandFields().filter { $0.name != "channel_id" })
            let signed = try await post(
                broken, signature: SlackSigner(signingSecret: Self.example.signingSecret).signature(body: broken, timestamp: Self.example.timestamp))
            #expect(signed.status == .badRequest)
            #expect(String(buffer: signed.body).contains("missing field `channel_id`"))
            #expect(signed.headers[values: SlackHeaders.noRetry] == ["1"])
        }
    }
}
