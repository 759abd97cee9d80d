import Foundation
import HTTPTypes
import HummingbirdTesting
import RelayCore
import RelayPipeline
import RelayTestSupport
import RelayTestTags
import Testing

@testable import GoogleChatAdapter

/// Google's own libraries as the peer (issue 42, point 7): google-auth verifies the same tokens
/// the relay verifies, as Google's guide to verifying Chat requests does it, and signs tokens the
/// relay must take; its service-account credentials get a token from the fake as from Google,
/// and it reads the relay's own grant assertion; google-apps-chat's `Message` type reads,
/// strictly, every message the relay sends.
@Suite("Google Chat: Google's libraries as the peer", .tags(.peers))
struct GoogleChatGooglePeerTests {
    /// google-auth's verdict on each token, as Google's guide verifies a Chat request: for a
    /// project number, `verify_token` against Chat's certificates and `iss` Chat's account; for
    /// an endpoint URL, `verify_oauth2_token` (Google's issuers) and `email` Chat's account.
    static let judge = """
        import json, sys
        import google.auth.transport.requests
        from google.oauth2 import id_token
        request = google.auth.transport.requests.Request()
        CHAT = "chat@system.gserviceaccount.com"
        def judge(case):
            try:
                if case["kind"] == "project":
                    claims = id_token.verify_token(case["token"], request, audience=case["audience"], certs_url=case["certs"], clock_skew_in_seconds=300)
                    return claims.get("iss") == CHAT
                claims = id_token.verify_token(case["token"], request, audience=case["audience"], certs_url=case["certs"], clock_skew_in_seconds=300)
                return claims.get("iss") in ("accounts.google.com", "https://accounts.google.com") and claims.get("email") == CHAT and claims.get("email_verified", True)
            except Exception as error:
                return False
        cases = json.load(open(sys.argv[1]))
        print(json.dumps([judge(case) for case in cases]))
        """

    @Test func theRelayAcceptsExactlyTheTokensGoogleAuthAccepts() async throws {
        for audience in [FakeGoogleChat.projectNumber, GoogleChatHarness.endpointURL] {
            try await GoogleChatHarness.with(audience: audience) { harness, client in
                let google = harness.google
                let now = harness.clock.now
                let isProject = audience == FakeGoogleChat.projectNumber
                let certs = isProject ? google.chatCertsURL : google.googleCertsURL
                let stranger = try TestRSAKey(kid: isProject ? google.chatKey.kid : google.googleKey.kid)
                let valid = isProject ? google.chatToken(now: now) : google.idToken(audience: audience, now: now)
                var cases: [(String, String)] = [
                    ("valid", valid),
                    (
                        "expired",
                        isProject
                            ? google.chatToken(now: now.addingTimeInterval(-4200)) : google.idToken(audience: audience, now: now.addingTimeInterval(-4200))
                    ),
                    (
                        "within the skew",
                        isProject
                            ? google.chatToken(now: now.addingTimeInterval(-3700)) : google.idToken(audience: audience, now: now.addingTimeInterval(-3700))
                    ),
                    ("another app", isProject ? google.chatToken(audience: "271828182845") : google.idToken(audience: "https://other.example.com/x")),
                    (
                        "unknown kid",
                        try TestRSAKey(kid: "nobody-knows").rs256([
                            "iss": "chat@system.gserviceaccount.com", "aud": .string(audience), "exp": .int(Int(now.timeIntervalSince1970) + 600),
                        ])
                    ),
                ]
                if isProject {
                    cases.append(("forged", google.chatToken(key: stranger)))
                    cases.append(("another issuer", google.chatToken(claims: ["iss": "mallory@evil.iam.gserviceaccount.com"])))
                } else {
                    cases.append(("another Google account", google.idToken(audience: audience, email: "mallory@example.com")))
                    cases.append(("another issuer", google.idToken(audience: audience, claims: ["iss": "https://evil.example.com"])))
                }
                let input = JSONValue.array(
                    cases.map { ["kind": isProject ? "project" : "url", "token": .string($0.1), "audience": .string(audience), "certs": .string(certs)] })
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("google-cases-\(UUID().uuidString).json")
                try Data(input.encoded()).write(to: file)
                defer { try? FileManager.default.removeItem(at: file) }
                let result = try await PythonPeers.run(script: Self.judge, arguments: [file.path], timeout: .seconds(120))
                #expect(result.status == 0, "\(result.output)")
                let verdicts = try #require(JSONValue.parse(Array(result.output.split(separator: "\n").last.map { Array($0.utf8) } ?? [])))
                for (index, (name, token)) in cases.enumerated() {
                    let library = verdicts[index]?.boolValue
                    let response = try await harness.post(google.message("fix teh cat"), token: token, to: client)
                    #expect(
                        library == (response.status == .ok),
                        "\(audience) \(name): google-auth says \(String(describing: library)), the relay \(response.status)")
                }
                #expect(verdicts[0]?.boolValue == true, "the fake's own token passes google-auth")
            }
        }
    }

    /// A token google-auth signs (`jwt.encode` with its RSA signer), with Chat's claims: the
    /// relay takes it.
    @Test func aTokenSignedByGoogleAuthIsTaken() async throws {
        try await GoogleChatHarness.with { harness, client in
            let script = """
                import json, sys, time
                from google.auth import crypt, jwt
                signer = crypt.RSASigner.from_string(open(sys.argv[1]).read(), sys.argv[2])
                now = int(time.time())
                print(jwt.encode(signer, {"iss": "chat@system.gserviceaccount.com", "aud": sys.argv[3], "iat": now, "exp": now + 3600}).decode())
                """
            let key = FileManager.default.temporaryDirectory.appendingPathComponent("chat-key-\(UUID().uuidString).pem")
            try Data(harness.google.chatKey.privateKeyPEM.utf8).write(to: key)
            defer { try? FileManager.default.removeItem(at: key) }
            let result = try await PythonPeers.run(script: script, arguments: [key.path, harness.google.chatKey.kid, FakeGoogleChat.projectNumber])
            #expect(result.status == 0, "\(result.output)")
            let token = try #require(result.output.split(separator: "\n").last.map(String.init))
            let response = try await harness.post(harness.google.message("translate fr hi"), token: token, to: client)
            #expect(response.status == .ok)
            #expect(harness.inbox.submissions.count == 1)
        }
    }

    /// google-auth's service-account credentials get a token from the fake's endpoint (so the
    /// fake checks grants as Google does), and google-auth reads the assertion the relay sent:
    /// signed by the account's key, for Google's token endpoint (google-auth's `aud`, whatever
    /// `token_uri` says), scope `chat.bot`.
    @Test func theGrantIsTheOneGoogleAuthMakes() async throws {
        try await GoogleChatHarness.with { harness, _ in
            _ = await harness.connection.sender.deliver(
                GoogleChatHarness.entry(.reply(Reply(kind: .info, body: "hello", isPrivate: false)), GoogleChatHarness.address()), earlier: nil)
            let grant = try #require(harness.google.requests().first { $0.0 == "POST /token" }?.1)
            let assertion = try #require(FakeGoogleChat.form(grant.rawBody)["assertion"])
            let script = """
                import json, sys
                import google.auth.transport.requests
                from google.auth import jwt
                from google.oauth2 import service_account
                info = json.load(open(sys.argv[1]))
                credentials = service_account.Credentials.from_service_account_info(info, scopes=["https://www.googleapis.com/auth/chat.bot"])
                credentials.refresh(google.auth.transport.requests.Request())
                certificate = open(sys.argv[2]).read()
                claims = jwt.decode(sys.argv[3], certs={info["private_key_id"]: certificate}, audience="https://oauth2.googleapis.com/token")
                print(json.dumps({"token": bool(credentials.token), "iss": claims["iss"], "scope": claims["scope"]}))
                """
            let directory = FileManager.default.temporaryDirectory
            let info = directory.appendingPathComponent("account-\(UUID().uuidString).json")
            let certificate = directory.appendingPathComponent("account-\(UUID().uuidString).pem")
            try Data(harness.google.serviceAccountJSON.utf8).write(to: info)
            try Data(harness.google.accountCertificatePEM.utf8).write(to: certificate)
            defer {
                try? FileManager.default.removeItem(at: info)
                try? FileManager.default.removeItem(at: certificate)
            }
            let result = try await PythonPeers.run(script: script, arguments: [info.path, certificate.path, assertion], timeout: .seconds(120))
            #expect(result.status == 0, "\(result.output)")
            let read = try #require(JSONValue.parse(Array((result.output.split(separator: "\n").last ?? "").utf8)))
            #expect(read["token"]?.boolValue == true)
            #expect(read["iss"]?.stringValue == FakeGoogleChat.serviceAccountEmail)
            #expect(read["scope"]?.stringValue == "https://www.googleapis.com/auth/chat.bot")
        }
    }

    /// Everything the relay sends — text, a card with buttons, a private message, a patch, an
    /// event's answer — read by google-apps-chat's `Message.from_json` with unknown fields
    /// refused.
    @Test func googleAppsChatReadsEveryMessageTheRelaySends() async throws {
        try await GoogleChatHarness.with { harness, _ in
            let sender = harness.connection.sender
            let address = GoogleChatHarness.address()
            let progress = GoogleChatHarness.entry(.progress(.started("/translate")), address)
            guard case .sent(let ref) = await sender.deliver(progress, earlier: nil) else {
                Issue.record("the progress was not sent")
                return
            }
            var placed = progress
            placed.platformRef = ref
            _ = await sender.deliver(
                GoogleChatHarness.entry(.reply(GoogleChatDeliveryTests.result("Bonjour <users/all>")), address, replaces: progress.id), earlier: placed)
            _ = await sender.deliver(GoogleChatHarness.entry(.reply(GoogleChatDeliveryTests.result("Privé", private: true)), address), earlier: nil)
            _ = await sender.deliver(GoogleChatHarness.entry(.reply(Reply(kind: .error, body: "a & <b>", isPrivate: false)), address), earlier: nil)
            let slot = harness.connection.answers.open()
            let waiting = Task { await harness.connection.answers.wait(slot) }
            _ = await sender.deliver(
                GoogleChatHarness.entry(.reply(Reply(kind: .info, body: "help", isPrivate: true)), GoogleChatHarness.address(slot: slot)), earlier: nil)
            let answered = try #require(await waiting.value)
            let sent = harness.google.requests().filter { $0.0.hasPrefix("POST /v1/") || $0.0.hasPrefix("PATCH /v1/") }.compactMap(\.1.body) + [answered.body]
            #expect(sent.count == 5)
            let script = """
                import json, sys
                from google.apps import chat_v1
                for line in open(sys.argv[1]):
                    message = chat_v1.Message.from_json(line, ignore_unknown_fields=False)
                    print(json.dumps({"text": message.text, "cards": len(message.cards_v2), "viewer": message.private_message_viewer.name,
                                      "buttons": [b.text for c in message.cards_v2 for s in c.card.sections for w in s.widgets for b in w.button_list.buttons]}))
                """
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("chat-sent-\(UUID().uuidString).jsonl")
            try Data(sent.map { String(decoding: $0.encoded(), as: UTF8.self) }.joined(separator: "\n").utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try await PythonPeers.run(script: script, arguments: [file.path], timeout: .seconds(120))
            #expect(result.status == 0, "\(result.output)")
            let read = result.output.split(separator: "\n").compactMap { JSONValue.parse(Array($0.utf8)) }
            #expect(read.count == 5, "\(result.output)")
            #expect(read.first?["text"]?.stringValue?.hasPrefix("⏳") == true)
            #expect(read.dropFirst().first?["cards"]?.intValue == 1)
            #expect(read.dropFirst().first?["buttons"] == ["Run again"])
            #expect(read.dropFirst(2).first?["viewer"]?.stringValue == FakeGoogleChat.alice)
            #expect(read.dropFirst(2).first?["buttons"] == ["Post to channel", "Run again"])
            #expect(read.dropFirst(3).first?["text"]?.stringValue == "⚠️ a & <\u{2060}b>")
            #expect(read.last?["viewer"]?.stringValue == FakeGoogleChat.alice)
        }
    }
}
