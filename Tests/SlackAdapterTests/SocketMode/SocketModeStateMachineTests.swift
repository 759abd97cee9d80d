import RelayCore
import SlackAdapter
import Testing

@Suite("Socket Mode state machine")
struct SocketModeStateMachineTests {
    /// No jitter, so delays are exact: 1, 2, 4, 8 s, capped at 8.
    static func machine(healthyUptime: Duration = .seconds(30)) -> SocketModeStateMachine {
        SocketModeStateMachine(
            backoff: Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 0), healthyUptime: healthyUptime,
            deduplicationCapacity: 16, unitRandom: { 1 })
    }

    static func envelope(_ id: String, eventID: String? = nil, retry: Int = 0) -> SocketModeEnvelope {
        var payload: JSONValue = ["type": "event_callback", "event": ["type": "app_mention", "text": "hi"]]
        if let eventID, case .object(var members) = payload {
            members["event_id"] = .string(eventID)
            payload = .object(members)
        }
        return SocketModeEnvelope(
            type: .eventsAPI, envelopeID: id, retryAttempt: retry, retryReason: retry > 0 ? "timeout" : nil, payload: payload)
    }

    /// Starts a machine and brings connection 1 to `connected`.
    static func connected() -> SocketModeStateMachine {
        var machine = machine()
        _ = machine.handle(.start)
        _ = machine.handle(.urlOpened("wss://example/1"))
        _ = machine.handle(.received(.hello(numConnections: 1), on: 1))
        return machine
    }

    @Test func startOpensAURLThenConnectsThenWaitsForHello() {
        var machine = Self.machine()
        #expect(machine.state == .idle)
        #expect(machine.handle(.start) == [.requestURL])
        #expect(machine.state == .requestingURL(replacing: nil))
        #expect(machine.handle(.start) == [], "a second start does nothing")

        #expect(machine.handle(.urlOpened("wss://example/1")) == [.connect(1, url: "wss://example/1")])
        #expect(machine.state == .connecting(1, replacing: nil))
        #expect(machine.openConnections == [1])

        #expect(machine.handle(.received(.hello(numConnections: 1), on: 1)) == [])
        #expect(machine.state == .connected(1))
    }

    @Test func everyEnvelopeIsHandedOnAndAcknowledgedOnceHandled() {
        var machine = Self.connected()
        for (id, type) in [("e1", SocketModeEnvelope.Kind.eventsAPI), ("e2", .slashCommands), ("e3", .interactive)] {
            let envelope = SocketModeEnvelope(type: type, envelopeID: id, payload: ["x": 1])
            #expect(machine.handle(.received(.envelope(envelope), on: 1)) == [.deliver(envelope)])
            #expect(machine.handle(.handled(envelope, acknowledge: true)) == [.acknowledge(envelope, on: 1)])
        }
        #expect(machine.state == .connected(1))
    }

    @Test func duplicatesAreHandedOnOnceAndAcknowledgedWithTheFirst() {
        var machine = Self.connected()
        let first = Self.envelope("e1", eventID: "Ev1")
        #expect(machine.handle(.received(.envelope(first), on: 1)) == [.deliver(first)])

        // The same envelope again, and Slack's retry of the same event under a new envelope id,
        // while the first is being stored: acknowledged with it.
        #expect(machine.handle(.received(.envelope(first), on: 1)) == [])
        let retry = Self.envelope("e1-retry", eventID: "Ev1", retry: 1)
        #expect(machine.handle(.received(.envelope(retry), on: 1)) == [])
        #expect(
            machine.handle(.handled(first, acknowledge: true)) == [.acknowledge(first, on: 1), .acknowledge(first, on: 1), .acknowledge(retry, on: 1)])

        // Once stored, a repeat is acknowledged at once.
        #expect(machine.handle(.received(.envelope(first), on: 1)) == [.acknowledge(first, on: 1)])

        // A retry of an event never seen (its first delivery went to a dead connection) is new.
        let unseen = Self.envelope("e2-retry", eventID: "Ev2", retry: 2)
        #expect(machine.handle(.received(.envelope(unseen), on: 1)) == [.deliver(unseen)])
    }

    @Test func anEnvelopeThatCouldNotBeStoredIsNotAcknowledgedAndComesAgain() {
        var machine = Self.connected()
        let envelope = Self.envelope("e1", eventID: "Ev1")
        #expect(machine.handle(.received(.envelope(envelope), on: 1)) == [.deliver(envelope)])
        let repeated = Self.envelope("e1-retry", eventID: "Ev1", retry: 1)
        #expect(machine.handle(.received(.envelope(repeated), on: 1)) == [])
        #expect(machine.handle(.handled(envelope, acknowledge: false)) == [], "neither it nor its repeat is acknowledged")
        // Slack sends it again: handed on again, and acknowledged once stored.
        let again = Self.envelope("e1-retry-2", eventID: "Ev1", retry: 2)
        #expect(machine.handle(.received(.envelope(again), on: 1)) == [.deliver(again)])
        #expect(machine.handle(.handled(again, acknowledge: true)) == [.acknowledge(again, on: 1)])
    }

    @Test func anAcknowledgementForAConnectionThatClosedMeanwhileIsDropped() {
        var machine = Self.connected()
        let envelope = Self.envelope("e1", eventID: "Ev1")
        #expect(machine.handle(.received(.envelope(envelope), on: 1)) == [.deliver(envelope)])
        _ = machine.handle(.closed(1, uptime: .seconds(60)))
        #expect(machine.handle(.handled(envelope, acknowledge: true)) == [])
    }

    @Test func aRefreshOpensTheNewConnectionBeforeClosingTheOld() {
        var machine = Self.connected()
        #expect(machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 1)) == [.requestURL])
        #expect(machine.state == .requestingURL(replacing: 1))

        // Envelopes on the old connection are still delivered (and acknowledged there) meanwhile.
        let during = Self.envelope("e-during-url")
        #expect(machine.handle(.received(.envelope(during), on: 1)) == [.deliver(during)])

        #expect(machine.handle(.urlOpened("wss://example/2")) == [.connect(2, url: "wss://example/2")])
        #expect(machine.state == .connecting(2, replacing: 1))
        #expect(machine.openConnections == [1, 2])

        let overlap = Self.envelope("e-overlap")
        #expect(machine.handle(.received(.envelope(overlap), on: 1)) == [.deliver(overlap)])

        // Only the new hello closes the old one.
        #expect(machine.handle(.received(.hello(numConnections: 2), on: 2)) == [.close(1)])
        #expect(machine.state == .connected(2))

        // Still arriving on the closing one: delivered, not lost, and acknowledged there.
        let late = Self.envelope("e-late")
        #expect(machine.handle(.received(.envelope(late), on: 1)) == [.deliver(late)])
        // Slack sends it again on the new one since the old ack may not have gone out: not doubled.
        #expect(machine.handle(.received(.envelope(late), on: 2)) == [])
        #expect(machine.handle(.handled(late, acknowledge: true)) == [.acknowledge(late, on: 1), .acknowledge(late, on: 2)])

        // The old connection's end is expected: no reconnect.
        #expect(machine.handle(.closed(1, uptime: .seconds(3600))) == [])
        #expect(machine.state == .connected(2))
        #expect(machine.openConnections == [2])
        #expect(machine.backoff.attempts == 0, "a refresh does not back off")
    }

    @Test func aWarningDisconnectRefreshesTheSameWay() {
        var machine = Self.connected()
        #expect(machine.handle(.received(.disconnect(reason: "warning"), on: 1)) == [.requestURL])
        #expect(machine.state == .requestingURL(replacing: 1))
        // A second disconnect on the old connection changes nothing.
        #expect(machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 1)) == [])
    }

    @Test func theOldConnectionMayCloseBeforeTheNewOneIsReady() {
        var machine = Self.connected()
        _ = machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 1))
        _ = machine.handle(.urlOpened("wss://example/2"))
        #expect(machine.handle(.closed(1, uptime: .seconds(100))) == [])
        #expect(machine.state == .connecting(2, replacing: nil))
        #expect(machine.handle(.received(.hello(numConnections: 1), on: 2)) == [])
        #expect(machine.state == .connected(2))
    }

    @Test func aFailedRefreshRetriesWhileTheOldConnectionStaysUp() {
        var machine = Self.connected()
        _ = machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 1))
        #expect(machine.handle(.urlFailed(retryAfter: nil)) == [.retry(after: .seconds(1))])
        #expect(machine.state == .waitingToRetry(replacing: 1))
        let envelope = Self.envelope("e1")
        #expect(machine.handle(.received(.envelope(envelope), on: 1)) == [.deliver(envelope)])
        #expect(machine.handle(.retryTimerFired) == [.requestURL])
        #expect(machine.handle(.urlOpened("wss://example/2")) == [.connect(2, url: "wss://example/2")])
        #expect(machine.handle(.received(.hello(numConnections: 2), on: 2)) == [.close(1)])
    }

    @Test func anUnexpectedCloseReconnectsWithGrowingCappedBackoff() {
        var machine = Self.machine()
        _ = machine.handle(.start)
        // apps.connections.open fails again and again: 1, 2, 4, 8, 8 s.
        var delays: [Duration] = []
        for _ in 0..<5 {
            guard case .retry(let delay) = machine.handle(.urlFailed(retryAfter: nil)).first else {
                Issue.record("expected a retry")
                return
            }
            delays.append(delay)
            #expect(machine.handle(.retryTimerFired) == [.requestURL])
        }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)])

        // A connection that never said hello counts as a failure too.
        _ = machine.handle(.urlOpened("wss://example/1"))
        #expect(machine.handle(.closed(1, uptime: .milliseconds(100))) == [.retry(after: .seconds(8))])
        #expect(machine.state == .waitingToRetry(replacing: nil))
    }

    @Test func aHealthyConnectionResetsTheBackoffAndAShortOneDoesNot() {
        var machine = Self.machine(healthyUptime: .seconds(30))
        _ = machine.handle(.start)
        _ = machine.handle(.urlFailed(retryAfter: nil))  // 1
        _ = machine.handle(.retryTimerFired)
        _ = machine.handle(.urlFailed(retryAfter: nil))  // 2
        _ = machine.handle(.retryTimerFired)
        _ = machine.handle(.urlOpened("wss://example/1"))
        _ = machine.handle(.received(.hello(numConnections: 1), on: 1))

        // Up for a few seconds only: the backoff goes on growing.
        #expect(machine.handle(.closed(1, uptime: .seconds(5))) == [.retry(after: .seconds(4))])
        _ = machine.handle(.retryTimerFired)
        _ = machine.handle(.urlOpened("wss://example/2"))
        _ = machine.handle(.received(.hello(numConnections: 1), on: 2))

        // Up for an hour: start over.
        #expect(machine.handle(.closed(2, uptime: .seconds(3600))) == [.retry(after: .seconds(1))])
    }

    @Test func rateLimitedURLRequestsWaitAtLeastRetryAfter() {
        var machine = Self.machine()
        _ = machine.handle(.start)
        #expect(machine.handle(.urlFailed(retryAfter: .seconds(20))) == [.retry(after: .seconds(20))])
        _ = machine.handle(.retryTimerFired)
        #expect(machine.handle(.urlFailed(retryAfter: .milliseconds(500))) == [.retry(after: .seconds(2))])
    }

    @Test func aConnectionWithoutHelloIsDroppedAndRetried() {
        var machine = Self.machine()
        _ = machine.handle(.start)
        _ = machine.handle(.urlOpened("wss://example/1"))
        #expect(machine.handle(.helloTimedOut(1)) == [.close(1), .retry(after: .seconds(1))])
        #expect(machine.state == .waitingToRetry(replacing: nil))
        // Its close is expected: no second retry.
        #expect(machine.handle(.closed(1, uptime: .seconds(10))) == [])
        // A stale timeout for a connection that did say hello is ignored.
        _ = machine.handle(.retryTimerFired)
        _ = machine.handle(.urlOpened("wss://example/2"))
        _ = machine.handle(.received(.hello(numConnections: 1), on: 2))
        #expect(machine.handle(.helloTimedOut(2)) == [])
        #expect(machine.state == .connected(2))
    }

    @Test func stopClosesEverythingAndFinishesWhenAllHaveClosed() {
        var machine = Self.connected()
        _ = machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 1))
        _ = machine.handle(.urlOpened("wss://example/2"))
        #expect(machine.handle(.stop) == [.close(1), .close(2)])
        #expect(machine.state == .stopped)
        #expect(!machine.isFinished)
        #expect(machine.handle(.stop) == [])

        // Late answers and frames change nothing, but an envelope is still not lost.
        #expect(machine.handle(.urlOpened("wss://example/3")) == [])
        #expect(machine.handle(.received(.hello(numConnections: 2), on: 2)) == [])
        let envelope = Self.envelope("e-final")
        #expect(machine.handle(.received(.envelope(envelope), on: 2)) == [.deliver(envelope)])

        #expect(machine.handle(.closed(1, uptime: .seconds(60))) == [])
        #expect(!machine.isFinished)
        #expect(machine.handle(.closed(2, uptime: .seconds(1))) == [])
        #expect(machine.isFinished)
    }

    @Test func stopWhileWaitingToRetryFinishesAtOnce() {
        var machine = Self.machine()
        _ = machine.handle(.start)
        _ = machine.handle(.urlFailed(retryAfter: nil))
        #expect(machine.handle(.stop) == [])
        #expect(machine.isFinished)
        #expect(machine.handle(.retryTimerFired) == [])
    }

    @Test func aDisconnectBeforeHelloDropsThatConnectionAndAsksAgain() {
        var machine = Self.machine()
        _ = machine.handle(.start)
        _ = machine.handle(.urlOpened("wss://example/1"))
        #expect(machine.handle(.received(.disconnect(reason: "too_many_websockets"), on: 1)) == [.close(1), .requestURL])
        #expect(machine.state == .requestingURL(replacing: nil))
        #expect(machine.handle(.closed(1, uptime: .seconds(1))) == [])
    }

    @Test func otherMessagesAreIgnored() {
        var machine = Self.connected()
        #expect(machine.handle(.received(.other(type: "something_new"), on: 1)) == [])
        #expect(machine.state == .connected(1))
    }

    /// Brings a new connection up after `machine` asked for a URL: open, hello.
    static func reconnect(_ machine: inout SocketModeStateMachine, id: Int) {
        _ = machine.handle(.urlOpened("wss://example/\(id)"))
        _ = machine.handle(.received(.hello(numConnections: 1), on: id))
    }

    @Test func disconnectsRightAfterEveryHelloGetOnePromptRefreshThenBackOff() {
        var machine = Self.connected()
        #expect(machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 1)) == [.requestURL])
        Self.reconnect(&machine, id: 2)
        var delays: [Duration] = []
        for id in 2...6 {
            let actions = machine.handle(.received(.disconnect(reason: "warning"), on: id))
            guard case .retry(let delay)? = actions.first, actions.count == 1 else {
                Issue.record("expected a delayed retry, got \(actions)")
                return
            }
            delays.append(delay)
            // The old connection stays open meanwhile, and still delivers.
            #expect(machine.state == .waitingToRetry(replacing: id))
            #expect(machine.handle(.retryTimerFired) == [.requestURL])
            _ = machine.handle(.urlOpened("wss://example/\(id + 1)"))
            #expect(machine.handle(.received(.hello(numConnections: 2), on: id + 1)) == [.close(id)])
        }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)])
    }

    @Test func aHealthyConnectionResetsTheBackoffAndMayRefreshAtOnce() {
        var machine = Self.connected()
        _ = machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 1))
        Self.reconnect(&machine, id: 2)
        #expect(machine.handle(.received(.disconnect(reason: "warning"), on: 2)) == [.retry(after: .seconds(1))])
        _ = machine.handle(.retryTimerFired)
        Self.reconnect(&machine, id: 3)
        // A stale timer for a connection that is no longer current changes nothing.
        #expect(machine.handle(.uptimeReached(2)) == [])
        #expect(machine.backoff.attempts == 1)
        // Connection 3 stays up long enough.
        #expect(machine.handle(.uptimeReached(3)) == [])
        #expect(machine.backoff.attempts == 0)
        #expect(machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 3)) == [.requestURL])
        Self.reconnect(&machine, id: 4)
        // The next unproven one waits, from the first step again.
        #expect(machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 4)) == [.retry(after: .seconds(1))])
    }

    @Test func deliveringAnEnvelopeMakesAConnectionHealthy() {
        var machine = Self.connected()
        _ = machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 1))
        Self.reconnect(&machine, id: 2)
        let envelope = Self.envelope("e1", eventID: "Ev1")
        _ = machine.handle(.received(.envelope(envelope), on: 2))
        #expect(machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 2)) == [.requestURL])
        // A repeat does not count: only a first delivery proves the connection.
        Self.reconnect(&machine, id: 3)
        _ = machine.handle(.received(.envelope(envelope), on: 3))
        #expect(machine.handle(.received(.disconnect(reason: "refresh_requested"), on: 3)) == [.retry(after: .seconds(1))])
    }

    @Test func repeatedDisconnectsBeforeHelloBackOffToo() {
        var machine = Self.machine()
        _ = machine.handle(.start)
        _ = machine.handle(.urlOpened("wss://example/1"))
        #expect(machine.handle(.received(.disconnect(reason: "too_many_websockets"), on: 1)) == [.close(1), .requestURL])
        _ = machine.handle(.urlOpened("wss://example/2"))
        #expect(machine.handle(.received(.disconnect(reason: "too_many_websockets"), on: 2)) == [.close(2), .retry(after: .seconds(1))])
        #expect(machine.state == .waitingToRetry(replacing: nil))
    }
}
