import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayTestSupport
import Testing

@testable import GoogleChatAdapter

/// `POST /google-chat/events` takes only what Google Chat signed (issue 42, points 5 and 9):
/// every refused request gets its status and its reason, and nothing is submitted.
@Suite("Google Chat: verified events")
struct GoogleChatTokenTests {
    @Test func aProjectNumberTokenFromGoogleChatIsTaken() async throws {
        try await GoogleChatHarness.with { harness, client in
            let response = try await harness.post(harness.google.message("translate fr Good morning"), to: client)
            #expect(response.status == .ok)
            #expect(harness.inbox.submissions.map(\.0.text) == ["/translate fr Good morning"])
        }
    }

    @Test func anIDTokenForTheEndpointURLIsTaken() async throws {
        try await GoogleChatHarness.with(audience: GoogleChatHarness.endpointURL) { harness, client in
            let event = harness.google.message("fix teh cat")
            let taken = try await harness.post(event, token: harness.google.idToken(audience: GoogleChatHarness.endpointURL), to: client)
            #expect(taken.status == .ok)
            // Anyone with a Google account can get an ID token for the URL: only Google Chat's counts.
            let stranger = harness.google.idToken(audience: GoogleChatHarness.endpointURL, email: "mallory@example.com")
            let refused = try await harness.post(event, token: stranger, to: client)
            #expect(refused.status == .unauthorized)
            #expect(String(buffer: refused.body).contains("not Google Chat's"))
            let unverified = harness.google.idToken(audience: GoogleChatHarness.endpointURL, claims: ["email_verified": false])
            #expect(try await harness.post(event, token: unverified, to: client).status == .unauthorized)
            // A project-number token is not an ID token.
            let chat = harness.google.chatToken(audience: GoogleChatHarness.endpointURL)
            #expect(try await harness.post(event, token: chat, to: client).status == .unauthorized)
            #expect(harness.inbox.submissions.count == 1)
        }
    }

    @Test func everyBadTokenIsRefusedAndNothingRuns() async throws {
        try await GoogleChatHarness.with { harness, client in
            let google = harness.google
            let now = harness.clock.now
            let stranger = try TestRSAKey(kid: google.chatKey.kid)
            let cases: [(String, String?, String)] = [
                ("no header", nil, "No Authorization header"),
                ("forged", google.chatToken(key: stranger), "signature does not match"),
                ("expired", google.chatToken(now: now.addingTimeInterval(-3600 - 600)), "expired"),
                (
                    "not yet valid", google.chatToken(now: now.addingTimeInterval(1200), claims: ["exp": .int(Int(now.timeIntervalSince1970) + 9000)]),
                    "not valid yet"
                ),
                ("another app", google.chatToken(audience: "999999999999"), "another app"),
                ("another issuer", google.chatToken(claims: ["iss": "mallory@evil.iam.gserviceaccount.com"]), "not issued by Google Chat"),
                ("an ID token", google.idToken(audience: FakeGoogleChat.projectNumber), "signed with a key Google does not publish"),
                (
                    "HS256",
                    TestJWT.hs256(
                        ["iss": "chat@system.gserviceaccount.com", "aud": .string(FakeGoogleChat.projectNumber)], secret: "s",
                        header: ["alg": "HS256", "kid": .string(google.chatKey.kid)]), "RS256"
                ),
                ("none", "eyJhbGciOiJub25lIn0.eyJhdWQiOiIxIn0.", "RS256"),
                ("not a JWT", "ya29.not-a-jwt", "not a JWT"),
                ("no expiry", google.chatToken(claims: ["exp": .null]), "no expiry"),
            ]
            for (name, token, reason) in cases {
                let response = try await harness.post(google.message("translate fr hi"), token: token, to: client)
                #expect(response.status == .unauthorized, "\(name)")
                #expect(String(buffer: response.body).contains(reason), "\(name): \(String(buffer: response.body))")
            }
            var headers: HTTPFields = [.contentType: "application/json", .authorization: "Basic dXNlcjpwYXNz"]
            let basic = try await client.execute(uri: "/google-chat/events", method: .post, headers: headers, body: ByteBuffer(string: "{}"))
            #expect(basic.status == .unauthorized)
            headers[.authorization] = "Bearer " + String(repeating: "a", count: 20_000)
            #expect(
                try await client.execute(uri: "/google-chat/events", method: .post, headers: headers, body: ByteBuffer(string: "{}")).status == .unauthorized)
            #expect(harness.inbox.submissions.isEmpty)
        }
    }

    /// An unknown `kid` fetches the certificates again at most once a minute; a rotation is
    /// followed.
    @Test func anUnknownKeyFetchesTheCertificatesAtMostOnceAMinute() async throws {
        try await GoogleChatHarness.with { harness, client in
            let google = harness.google
            #expect(try await harness.post(google.message("fix a"), to: client).status == .ok)
            #expect(google.counts.certs == 1)
            harness.clock.advance(by: .seconds(61))
            let rotated = try TestRSAKey(kid: "fake-chat-key-2")
            for _ in 0..<5 {
                let response = try await harness.post(google.message("fix b"), token: google.chatToken(now: harness.clock.now, key: rotated), to: client)
                #expect(response.status == .unauthorized)
            }
            #expect(google.counts.certs == 2, "one fetch for the first unknown kid, none for the next four")
            google.publish(rotated)
            harness.clock.advance(by: .seconds(61))
            let response = try await harness.post(google.message("fix c"), token: google.chatToken(now: harness.clock.now, key: rotated), to: client)
            #expect(response.status == .ok)
            #expect(google.counts.certs == 3)
        }
    }

    @Test func certificatesThatCannotBeFetchedAre503() async throws {
        try await GoogleChatHarness.with(certsURL: { $0.url + "/nowhere" }) { harness, client in
            let response = try await harness.post(harness.google.message("fix a"), to: client)
            #expect(response.status == .serviceUnavailable)
            #expect(String(buffer: response.body).contains("could not be fetched"))
            #expect(harness.inbox.submissions.isEmpty)
        }
    }

    @Test func oversizedMalformedAndUnknownEventsGetTheirStatus() async throws {
        try await GoogleChatHarness.with { harness, client in
            let token = harness.google.chatToken(now: harness.clock.now)
            let headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(token)"]
            let huge = harness.google.message(String(repeating: "a", count: GoogleChatRoutes.maxBody))
            let tooLarge = try await harness.post(huge, to: client)
            #expect(tooLarge.status == .contentTooLarge)
            let malformed = try await client.execute(uri: "/google-chat/events", method: .post, headers: headers, body: ByteBuffer(string: "{\"type\": 1"))
            #expect(malformed.status == .badRequest)
            let noSpace = try await client.execute(
                uri: "/google-chat/events", method: .post, headers: headers, body: ByteBuffer(string: "{\"type\":\"MESSAGE\",\"user\":{\"name\":\"users/1\"}}"))
            #expect(noSpace.status == .badRequest)
            #expect(String(buffer: noSpace.body).contains("space"))
            var unknown = harness.google.message("fix a").objectValue ?? [:]
            unknown["type"] = "SOMETHING_NEW"
            let response = try await harness.post(.object(unknown), to: client)
            #expect(response.status == .badRequest)
            #expect(String(buffer: response.body).contains("SOMETHING_NEW"))
            #expect(harness.inbox.submissions.isEmpty)
        }
    }
}
