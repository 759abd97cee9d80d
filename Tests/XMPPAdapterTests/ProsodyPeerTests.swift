import RelayTestSupport
import RelayTestTags
import Testing

/// The XMPP tests' peers (issue 43, point 8): a real Prosody of the test's own, and slixmpp as
/// the person, who signs in over STARTTLS with the test's certificate and joins a room.
@Suite("XMPP: a real Prosody, a person on slixmpp", .tags(.peers))
struct ProsodyPeerTests {
    @Test func aPersonSignsInOverStartTLSAndJoinsARoom() async throws {
        try await ProsodyTestServer.with { server in
            try await server.register("ada", password: "ada-password")
            let script = """
                import asyncio, sys, slixmpp
                class Person(slixmpp.ClientXMPP):
                    def __init__(self):
                        super().__init__("ada@localhost", "ada-password")
                        self.register_plugin("xep_0045")
                        self.add_event_handler("session_start", self.start)
                        self.add_event_handler("failed_auth", lambda e: print("failed auth", flush=True))
                    async def start(self, event):
                        print("signed in as", self.boundjid.bare, flush=True)
                        await self.plugin["xep_0045"].join_muc_wait("room@conference.localhost", "ada", timeout=10)
                        print("joined", flush=True)
                        self.disconnect()
                async def main():
                    person = Person()
                    person.ssl_context.load_verify_locations(sys.argv[1])
                    person.connect(host="127.0.0.1", port=int(sys.argv[2]))
                    await asyncio.wait_for(person.disconnected, 20)
                asyncio.run(main())
                """
            let (status, output) = try await PythonPeers.run(script: script, arguments: [server.caFile, "\(server.port)"], timeout: .seconds(60))
            #expect(status == 0, "\(output)\n\(server.logTail())")
            #expect(output.contains("signed in as ada@localhost") && output.contains("joined"), "\(output)\n\(server.logTail())")
        }
    }
}
