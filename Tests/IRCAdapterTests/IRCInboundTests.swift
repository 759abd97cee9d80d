import Testing

@testable import IRCAdapter

/// Which lines are commands for the relay (issue 43, point 2).
@Suite("IRC: commands as people type them")
struct IRCInboundTests {
    func outcome(_ line: String) -> IRCInbound.Outcome {
        IRCInbound.outcome(of: IRCMessage(line: Substring(line))!, me: "Rhea")
    }

    @Test func bangCommandsNickAddressedLinesAndPrivateMessagesRun() {
        let channel = IRCAddress(channel: "#rhea", nick: "ada")
        #expect(outcome(":ada!a@h PRIVMSG #rhea :!translate fr Good morning") == .run(line: "/translate fr Good morning", address: channel))
        #expect(outcome(":ada!a@h PRIVMSG #rhea :rhea: fix teh cat") == .run(line: "/fix teh cat", address: channel))
        #expect(outcome(":ada!a@h PRIVMSG #rhea :Rhea, !tribunal The sky is green") == .run(line: "/tribunal The sky is green", address: channel))
        #expect(outcome(":ada!a@h PRIVMSG #rhea :Rhea: the sky is green") == .run(line: "/tribunal the sky is green", address: channel))
        #expect(outcome(":ada!a@h PRIVMSG #rhea :Rhea:") == .run(line: "/help", address: channel))
        #expect(outcome(":ada!a@h PRIVMSG #rhea :!transalte fr hi") == .ignore, "another bot's word")
        #expect(outcome(":ada!a@h PRIVMSG #rhea :!rhea transalte fr hi") == .run(line: "/rhea transalte fr hi", address: channel))
        #expect(outcome(":ada!a@h PRIVMSG #rhea :good morning Rhea") == .ignore)
        #expect(outcome(":ada!a@h PRIVMSG #rhea :Rheanna: hi") == .ignore)
        let direct = IRCAddress(channel: nil, nick: "ada")
        #expect(outcome(":ada!a@h PRIVMSG Rhea :translate fr Good night") == .run(line: "/translate fr Good night", address: direct))
        #expect(outcome(":ada!a@h PRIVMSG Rhea :!transalte fr hi") == .run(line: "/transalte fr hi", address: direct))
        #expect(outcome(":ada!a@h PRIVMSG Rhea :is the sky green?") == .run(line: "/tribunal is the sky green?", address: direct))
    }

    @Test func ctcpNoticesAndTheRelaysOwnLinesAreNotCommands() {
        #expect(outcome(":ada!a@h PRIVMSG Rhea :\u{01}VERSION\u{01}") == .version(nick: "ada"))
        #expect(outcome(":ada!a@h PRIVMSG #rhea :\u{01}ACTION !translate fr hi\u{01}") == .ignore)
        #expect(outcome(":ada!a@h PRIVMSG Rhea :\u{01}PING 123\u{01}") == .ignore)
        #expect(outcome(":ada!a@h NOTICE Rhea :translate fr hi") == .ignore)
        #expect(outcome(":Rhea!r@h PRIVMSG #rhea :!translate fr hi") == .ignore)
        #expect(outcome(":irc.local PRIVMSG #rhea :!translate fr hi") == .ignore)
    }
}
