import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// Google Chat on two `rhea-relay serve` replicas on one real PostgreSQL: an event reaches
/// either replica, and the reply ready in time is that event's own HTTP answer, once, on both.
@Suite("Replicas on PostgreSQL: Google Chat answers in the event on every replica", .serialized, .tags(.peers))
struct ReplicaGoogleChatTests {
    @Test func eachReplicaAnswersItsOwnEventsOnce() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            try await withFakeRheaTribunal { tribunal in
                try await withFakeGoogleChat { google in
                    let replicas = try await ServeReplicas(
                        count: 2,
                        environment: [
                            "STORE_URL": database.url, "TRIBUNAL_URL": tribunal.url, "GOOGLE_CHAT_AUDIENCE": FakeGoogleChat.projectNumber,
                            "GOOGLE_CHAT_SERVICE_ACCOUNT": google.serviceAccountJSON, "GOOGLE_CHAT_CERTS_URL": google.chatCertsURL,
                            "GOOGLE_CHAT_API_URL": google.apiURL, "GOOGLE_CHAT_TOKEN_URL": google.tokenURL, "LOG_LEVEL": "warning",
                        ])
                    let ports = replicas.processes.map(\.port)
                    let spaces = (0..<8).map { "spaces/AAAAreplica\($0)" }
                    let (elapsed, _) = try await replicas.run {
                        var elapsed: [Duration] = []
                        for (index, space) in spaces.enumerated() {
                            let event = google.message("translate fr replica \(index)", id: "replica-\(index)", space: space)
                            let started = ContinuousClock.now
                            let status = await VisibleDoublesTests.googleChatEvent(event, port: ports[index % 2], google: google)
                            #expect(status == 200)
                            elapsed.append(ContinuousClock.now - started)
                        }
                        try await replicas.waitUntilIdle()
                        return elapsed
                    }
                    let shown = spaces.map { google.messages(in: $0) }
                    #expect(shown.map(\.count) == Array(repeating: 1, count: spaces.count), "each answered once: \(shown.map(\.count))")
                    #expect(shown.allSatisfy { $0.first?.viaEvent == true }, "in the event's own answer: \(shown.map { $0.first?.viaEvent })")
                    // A request that waits out the relay's window (`GoogleChatEventAnswers.window`, 10 s)
                    // ends without the answer; one answered in it ends before. A replica's first
                    // event, under load, has taken 5.7 s (its first Google certificates, token and
                    // store connections).
                    #expect(elapsed.allSatisfy { $0 < .seconds(10) }, "no request waits out its window: \(elapsed)")
                }
            }
        }
    }
}
