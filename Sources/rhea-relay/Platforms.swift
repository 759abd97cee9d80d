import DiscordAdapter
import GoogleChatAdapter
import IRCAdapter
import MatrixAdapter
import MattermostAdapter
import RelayPlatform
import SlackAdapter
import TeamsAdapter
import TelegramAdapter
import XMPPAdapter

/// Every chat platform the relay can serve. Adding one is its module, its target in
/// Package.swift and one line here (docs/contributing.md): `serve` reads each one's
/// configuration section and runs those that are on, `register` finds it by name, and the
/// deploy-file tests check that `deploy/` passes its variables.
let chatPlatforms: [any ChatPlatform.Type] = [
    SlackPlatform.self,
    DiscordPlatform.self,
    TelegramPlatform.self,
    MatrixPlatform.self,
    MattermostPlatform.self,
    TeamsPlatform.self,
    GoogleChatPlatform.self,
    IRCPlatform.self,
    XMPPPlatform.self,
]
