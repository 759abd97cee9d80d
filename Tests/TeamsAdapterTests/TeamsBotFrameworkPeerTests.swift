import Foundation
import HTTPTypes
import HummingbirdTesting
import RelayCore
import RelayPipeline
import RelayTestSupport
import RelayTestTags
import Testing

@testable import TeamsAdapter

/// Microsoft's own Bot Framework SDK as the peer (issue 42, point 7): botframework-connector's
/// channel validation — what a Bot Framework bot runs on every request — judges the same tokens
/// the relay judges, against the same fake OpenID metadata and keys, and botbuilder-schema reads
/// the activities the relay sends. The relay must accept exactly what the SDK accepts (it asks
/// RS256 only, where the SDK also takes RS384 and RS512, which the Bot Connector does not use),
/// and everything it sends must be an activity the SDK reads.
@Suite("Teams: the Bot Framework SDK as the peer", .tags(.peers))
struct TeamsBotFrameworkPeerTests {
    /// The SDK's verdict on each `(token, serviceUrl)`: `ChannelValidation.
    /// authenticate_channel_token_with_service_url` for channel `msteams`, with the fake's
    /// metadata, the app id as the one valid audience.
    static let validate = """
        import asyncio, json, sys
        from botframework.connector.auth import ChannelValidation, SimpleCredentialProvider
        ChannelValidation.open_id_metadata_endpoint = sys.argv[1]
        credentials = SimpleCredentialProvider(sys.argv[2], "")
        async def judge(case):
            try:
                await ChannelValidation.authenticate_channel_token_with_service_url(
                    "Bearer " + case["token"], credentials, case["serviceUrl"], "msteams")
                return True
            except Exception as error:
                return False
        cases = json.loads(sys.stdin.read() if len(sys.argv) < 4 else open(sys.argv[3]).read())
        print(json.dumps([asyncio.run(judge(case)) for case in cases]))
        """

    @Test func theRelayAcceptsExactlyTheTokensTheSDKAccepts() async throws {
        try await TeamsHarness.with { harness, client in
            let framework = harness.framework
            let now = harness.clock.now
            let stranger = try TestRSAKey(kid: "fake-bot-connector-key-1")
            let other = "https://smba.example.net/emea/"
            let cases: [(String, String, String)] = [
                ("valid", framework.activityToken(), framework.serviceURL),
                ("forged", framework.activityToken(key: stranger), framework.serviceURL),
                ("expired", framework.activityToken(now: now.addingTimeInterval(-900)), framework.serviceURL),
                ("within the skew", framework.activityToken(now: now.addingTimeInterval(-500)), framework.serviceURL),
                ("another bot", framework.activityToken(claims: ["aud": "99999999-0000-4000-8000-000000000000"]), framework.serviceURL),
                ("another issuer", framework.activityToken(claims: ["iss": "https://sts.windows.net/evil/"]), framework.serviceURL),
                ("another service", framework.activityToken(serviceURL: other), framework.serviceURL),
                ("HS256", framework.token(header: ["alg": "HS256", "kid": "fake-bot-connector-key-1"]), framework.serviceURL),
                ("unknown kid", framework.token(header: ["alg": "RS256", "kid": "nobody-knows-this-key"]), framework.serviceURL),
            ]
            let input = JSONValue.array(cases.map { ["token": .string($0.1), "serviceUrl": .string($0.2)] })
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("teams-cases-\(UUID().uuidString).json")
            try Data(input.encoded()).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try await PythonPeers.run(
                script: Self.validate, arguments: [framework.openIDMetadataURL, FakeBotFramework.appID, file.path], timeout: .seconds(120))
            #expect(result.status == 0, "\(result.output)")
            let verdicts = try #require(JSONValue.parse(Array(result.output.split(separator: "\n").last.map { Array($0.utf8) } ?? [])))
            for (index, (name, token, serviceURL)) in cases.enumerated() {
                let sdk = verdicts[index]?.boolValue
                let response = try await harness.post(harness.message("fix teh cat", serviceURL: serviceURL), token: token, to: client)
                #expect(sdk == (response.status == .ok), "\(name): the SDK says \(String(describing: sdk)), the relay \(response.status)")
            }
            #expect(verdicts[0]?.boolValue == true, "the fake's own token passes the SDK")
        }
    }

    /// What the relay sends (a card with buttons, HTML text, a progress line, an update) read
    /// back by botbuilder-schema's `Activity.deserialize`: each a message, its attachments Adaptive
    /// Cards, its text the text the relay sent.
    @Test func theSDKReadsEveryActivityTheRelaySends() async throws {
        try await TeamsHarness.with { harness, _ in
            let address = TeamsDeliveryTests.address(harness.framework)
            let progress = TeamsDeliveryTests.entry(.progress(.started("/translate")), address)
            guard case .sent(let ref) = await harness.connection.sender.deliver(progress, earlier: nil) else {
                Issue.record("the placeholder was not sent")
                return
            }
            var placed = progress
            placed.platformRef = ref
            _ = await harness.connection.sender.deliver(
                TeamsDeliveryTests.entry(.reply(TeamsDeliveryTests.result("Bonjour <at>x</at>")), address, replaces: progress.id), earlier: placed)
            _ = await harness.connection.sender.deliver(
                TeamsDeliveryTests.entry(.reply(Reply(kind: .info, body: "a & b", isPrivate: false)), address), earlier: nil)
            let sent = harness.framework.messages().flatMap(\.history)
            #expect(sent.count == 3)
            let script = """
                import json, sys
                from botbuilder.schema import Activity
                for line in sys.stdin if len(sys.argv) < 2 else open(sys.argv[1]):
                    activity = Activity().deserialize(json.loads(line))
                    assert activity.type == "message", activity.type
                    kinds = [a.content_type for a in (activity.attachments or [])]
                    assert all(k == "application/vnd.microsoft.card.adaptive" for k in kinds), kinds
                    card = activity.attachments[0].content if kinds else None
                    print(json.dumps({"text": activity.text, "format": activity.text_format, "card": card is not None,
                                      "actions": [a["title"] for a in (card or {}).get("actions", [])]}))
                """
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("teams-sent-\(UUID().uuidString).jsonl")
            try Data(sent.map { String(decoding: $0.encoded(), as: UTF8.self) }.joined(separator: "\n").utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try await PythonPeers.run(script: script, arguments: [file.path], timeout: .seconds(120))
            #expect(result.status == 0, "\(result.output)")
            let read = result.output.split(separator: "\n").compactMap { JSONValue.parse(Array($0.utf8)) }
            #expect(read.count == 3, "\(result.output)")
            #expect(read.first?["text"]?.stringValue?.hasPrefix("⏳") == true)
            #expect(read.first?["format"]?.stringValue == "xml")
            #expect(read.dropFirst().first?["card"]?.boolValue == true)
            #expect(read.dropFirst().first?["actions"] == ["Run again"])
            #expect(read.last?["text"]?.stringValue == "a &amp; b")
        }
    }
}
