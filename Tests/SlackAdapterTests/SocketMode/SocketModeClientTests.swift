import RelayCore
import RelayTestSupport
import SlackAdapter
import Synchronization
import Testing

// The time limit only stops a hung `run()` from holding up the whole test run; no test here
// asserts how fast anything happens.
@Suite("Socket Mode client against the fakes")
struct SocketModeClientTests {
    @Test func envelopesAreAcknowledgedAndHandedOn() async throws {
        try await withSocketMode { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitForConnections(count: 1)
            let open = try #require(harness.web.requests(path: "apps.connections.open").first)
            #expect(open.header("Authorization") == "Bearer \(harness.web.appToken)")

            try await socketMode.send(json: mentionEnvelope("env-1", eventID: "Ev1", text: "<@U0FAKEBOT> why?"))
            let acks = try await socketMode.waitForAck(envelopeID: "env-1")
            #expect(acks == [FakeSocketModeAck(connection: 1, envelopeID: "env-1")])

            let url = harness.web.makeResponseURL()
            try await socketMode.send(
                json: SlackPayloads.socketModeEnvelope(
                    type: "slash_commands", envelopeID: "env-2", payload: SlackPayloads.slashCommandJSON(text: "explain", responseURL: url)))
            try await socketMode.waitForAck(envelopeID: "env-2")

            let envelopes = try await harness.received.wait(count: 2)
            let mention = try #require(envelopes.first { $0.envelopeID == "env-1" })
            #expect(mention.type == .eventsAPI)
            #expect(mention.eventID == "Ev1")
            #expect(mention.payload["event"]?["text"] == "<@U0FAKEBOT> why?")
            let slash = try #require(envelopes.first { $0.envelopeID == "env-2" })
            #expect(slash.type == .slashCommands)
            #expect(slash.acceptsResponsePayload)
            #expect(slash.payload["response_url"]?.stringValue == url)
            #expect(harness.client.isConnected)
        }
    }

    @Test func stopClosesTheConnectionAndRunReturns() async throws {
        try await withSocketMode { harness in
            try await harness.socketMode.waitForConnections(count: 1)
            harness.client.stop()
            try await harness.run.value
            try await harness.socketMode.waitForClose(of: 1)
            #expect(harness.socketMode.timeline.contains(.closed(1, byServer: false)), "a clean close from the client")
            #expect(harness.client.state == .stopped)
            #expect(harness.logs.text.contains("Socket Mode stopped"))
        }
    }

    @Test func aRefreshOverlapsConnectionsAndLosesOrDoublesNothing() async throws {
        try await withSocketMode { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitForConnections(count: 1)
            // Hold the new connection's hello so the overlap lasts as long as the test needs.
            socketMode.setSendsHello(false)
            try await socketMode.sendDisconnect(reason: "refresh_requested", to: 1)
            try await socketMode.waitForConnections(count: 2)
            #expect(socketMode.openConnections == [1, 2], "the old connection stays open until the new one is ready")

            // Sent on the old connection during the overlap: acknowledged there, handed on.
            try await socketMode.send(json: mentionEnvelope("env-overlap", eventID: "EvO"), to: 1)
            try await socketMode.waitForAck(envelopeID: "env-overlap")
            try await harness.received.wait(count: 1)

            // The new connection says hello: only now does the old one close.
            try await socketMode.sendHello(to: 2)
            try await socketMode.waitForClose(of: 1)
            let timeline = socketMode.timeline
            let opened2 = try #require(timeline.firstIndex(of: .opened(2)))
            let hello2 = try #require(timeline.firstIndex(of: .sent(2, type: "hello")))
            let closed1 = try #require(timeline.firstIndex(of: .closed(1, byServer: false)))
            #expect(opened2 < hello2 && hello2 < closed1)
            #expect(socketMode.openConnections == [2])

            // Slack retries the event on the new connection: acknowledged, not handed on again.
            try await socketMode.send(json: mentionEnvelope("env-overlap-retry", eventID: "EvO", retryAttempt: 1), to: 2)
            try await socketMode.waitForAck(envelopeID: "env-overlap-retry")
            #expect(harness.logs.text.contains("not handed on again"))
            try await socketMode.send(json: mentionEnvelope("env-after", eventID: "EvA"), to: 2)
            try await harness.received.wait(count: 2)
            #expect(Set(harness.received.ids) == ["env-overlap", "env-after"])
            #expect(harness.received.ids.count == 2)
            #expect(harness.web.requests(path: "apps.connections.open").count == 2)
        }
    }

    @Test func aFrameThatIsNotAJSONObjectIsDroppedAndCountedAndTheConnectionGoesOn() async throws {
        try await withSocketMode { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitForConnections(count: 1)
            for frame in ["not json", "[1,2]", #""a string""#] {
                try await socketMode.send(rawText: frame)
            }
            try await socketMode.send(json: mentionEnvelope("env-after-garbage", eventID: "EvG"))
            try await socketMode.waitForAck(envelopeID: "env-after-garbage")
            try await harness.received.wait(count: 1)
            #expect(harness.web.requests(path: "apps.connections.open").count == 1, "the connection was kept")
            let dropped = harness.logs.text.split(separator: "\n").filter { $0.contains("platform payload dropped") }.count
            #expect(dropped == 3)
            #expect(harness.logs.text.contains("Slack Socket Mode frame"))
        }
    }

    @Test func anAbruptCloseReconnects() async throws {
        try await withSocketMode { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitForConnections(count: 1)
            // An acknowledged envelope shows the client is past the upgrade and the hello.
            try await socketMode.send(json: mentionEnvelope("env-before-drop", eventID: "EvB"))
            try await socketMode.waitForAck(envelopeID: "env-before-drop")
            try await socketMode.closeAbruptly(1)
            try await socketMode.waitForConnections(count: 2)
            #expect(socketMode.timeline.contains(.closed(1, byServer: true)))

            try await socketMode.send(json: mentionEnvelope("env-after-drop", eventID: "EvD"))
            let acks = try await socketMode.waitForAck(envelopeID: "env-after-drop")
            #expect(acks.map(\.connection) == [2])
            try await harness.received.wait(count: 2)
            #expect(harness.web.requests(path: "apps.connections.open").count == 2)
            #expect(harness.logs.text.contains("Socket Mode connection lost"))
        }
    }

    @Test func failedAttemptsAreRetriedUntilOneWorks() async throws {
        try await withSocketMode(prepare: { web, socketMode in
            web.failNext(2, with: .status(503), path: "apps.connections.open")
            web.failNext(1, with: .error("internal_error"), path: "apps.connections.open")
            socketMode.refuseNextConnections(1)
        }) { harness in
            try await harness.socketMode.waitForConnections(count: 1)
            // Three refused URL requests, one refused upgrade, then a URL that worked.
            #expect(harness.web.requests(path: "apps.connections.open").count == 5)
            #expect(harness.socketMode.refusedCount == 1)
            try await harness.socketMode.send(json: mentionEnvelope("env-1", eventID: "Ev1"))
            try await harness.received.wait(count: 1)
        }
    }

    @Test func aConnectionThatNeverSaysHelloIsReplaced() async throws {
        var configuration = fastSocketMode
        // Long enough that a loaded machine still reads a hello sent in time (300 ms was outlasted
        // once, and 2 s leaves little room on a machine 3 times slower).
        configuration.helloTimeout = .seconds(5)
        try await withSocketMode(
            configuration: configuration,
            prepare: { _, socketMode in
                socketMode.setSendsHello(false)
            }
        ) { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitForConnections(count: 1)
            socketMode.setSendsHello(true)
            try await socketMode.waitForClose(of: 1)
            // Some later connection is greeted and used.
            let timeline = try await socketMode.waitFor("a greeted connection") { events in
                events.contains { if case .sent(let id, "hello") = $0 { id > 1 } else { false } }
            }
            #expect(timeline.contains(.closed(1, byServer: false)))
            try await socketMode.send(json: mentionEnvelope("env-1", eventID: "Ev1"))
            try await harness.received.wait(count: 1)
            #expect(harness.logs.text.contains("did not say hello in time"))
        }
    }

    @Test func anEnvelopeIsAcknowledgedOnlyOnceItsHandlerIsDoneAndASlowOneHoldsOnlyItsOwn() async throws {
        let (gate, release) = AsyncStream<Void>.makeStream()
        let finished = Mutex<[String]>([])
        try await withSocketMode(handler: { envelope in
            if envelope.envelopeID == "env-slow" {
                for await _ in gate { break }
            }
            finished.withLock { $0.append(envelope.envelopeID) }
            return true
        }) { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitForConnections(count: 1)
            try await socketMode.send(json: mentionEnvelope("env-slow", eventID: "Ev1"))
            try await socketMode.send(json: mentionEnvelope("env-fast", eventID: "Ev2"))
            try await socketMode.waitForAck(envelopeID: "env-fast")
            try await harness.received.wait(count: 2)
            #expect(!finished.withLock { $0 }.contains("env-slow"), "still held by the test")
            #expect(socketMode.acks.allSatisfy { $0.envelopeID != "env-slow" }, "not acknowledged before its handler is done")
            release.yield()
            release.finish()
            try await socketMode.waitForAck(envelopeID: "env-slow")
        }
        #expect(Set(finished.withLock { $0 }) == ["env-slow", "env-fast"])
    }

    @Test func anEnvelopeThatCouldNotBeStoredIsNotAcknowledgedAndIsHandedOnAgainWhenSlackResendsIt() async throws {
        // The store fails for the first delivery only.
        try await withSocketMode(handler: { envelope in envelope.envelopeID != "env-1" }) { harness in
            let socketMode = harness.socketMode
            try await socketMode.waitForConnections(count: 1)
            try await socketMode.send(json: mentionEnvelope("env-1", eventID: "Ev1"))
            try await harness.received.wait(count: 1)
            try await socketMode.send(json: mentionEnvelope("env-2", eventID: "Ev2"))
            try await socketMode.waitForAck(envelopeID: "env-2")
            #expect(socketMode.acks.allSatisfy { $0.envelopeID != "env-1" }, "a failed store is not acknowledged")
            // Slack's retry of the first: the same event under a new envelope id.
            try await socketMode.send(json: mentionEnvelope("env-1b", eventID: "Ev1", retryAttempt: 1))
            try await socketMode.waitForAck(envelopeID: "env-1b")
            let handed = try await harness.received.wait(count: 3).map(\.envelopeID)
            #expect(handed.sorted() == ["env-1", "env-1b", "env-2"])
            #expect(socketMode.acks.allSatisfy { $0.envelopeID != "env-1" })
        }
    }

    @Test func cancellingTheTaskEndsRun() async throws {
        try await withFakeSocketModeServer { socketMode in
            try await withSlackWeb(socketMode: socketMode) { web in
                let client = SocketModeClient(
                    appToken: web.fake.appToken, web: web.client, configuration: fastSocketMode, logger: web.logs.logger
                ) { _ in true }
                let run = Task { try await client.run() }
                try await socketMode.waitForConnections(count: 1)

                // A second run() on the same client is refused while the first runs.
                await #expect(throws: SocketModeClientError.alreadyRunning) { try await client.run() }

                run.cancel()
                try await run.value
                try await socketMode.waitForClose(of: 1)
                #expect(!client.isConnected)
            }
        }
    }

    @Test func aStoppedClientDoesNotStartAgain() async throws {
        try await withSlackWeb { web in
            let client = SocketModeClient(
                appToken: web.fake.appToken, web: web.client, configuration: fastSocketMode, logger: web.logs.logger
            ) { _ in true }
            client.stop()
            try await client.run()
            #expect(web.fake.requests().isEmpty)
        }
    }
}
