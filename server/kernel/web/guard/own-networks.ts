// The networks the bridge itself is attached to (os.networkInterfaces): in the appliance, the compose networks
// (control, edge) and whatever else Docker attached; webfetch refuses them whatever their range (rule bridge_network).
import net from "node:net";
import os from "node:os";

export type NetworkInterfaces = () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;

export interface OwnNetworks {
  /** The interface's network containing the address, e.g. "172.18.0.0/16 (eth0)", or undefined. */
  containing(address: string): string | undefined;
}

/** Read on every check: Docker attaches and detaches networks while the bridge runs. */
export function ownNetworks(interfaces: NetworkInterfaces = os.networkInterfaces): OwnNetworks {
  return {
    containing(address) {
      const family = net.isIP(address);
      if (family === 0) return undefined;
      for (const [name, infos] of Object.entries(interfaces())) {
        for (const info of infos ?? []) {
          if (!info.cidr || (info.family === "IPv4" ? 4 : 6) !== family) continue;
          const [network, bits] = info.cidr.split("/") as [string, string];
          const list = new net.BlockList();
          list.addSubnet(network, Number(bits), family === 4 ? "ipv4" : "ipv6");
          if (list.check(address, family === 4 ? "ipv4" : "ipv6")) return `${info.cidr} (${name})`;
        }
      }
      return undefined;
    },
  };
}
