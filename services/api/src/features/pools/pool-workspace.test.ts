import { expect } from 'chai';
import { foreignDevices } from './pool-workspace.js';

/** Who owns each device of a pool definition, faked: no Redis. */
describe("foreignDevices: a pool holds its workspace's devices only (owners faked)", () => {
  const owners = new Map([
    ['a-1', 'acme'],
    ['a-2', 'acme'],
    ['g-1', 'globex'],
  ]);
  const ownerOf = async (d: string) => owners.get(d) ?? 'default';

  it("When a workspace's pool names another workspace's device or one nobody has, then both are foreign, by their place", async () => {
    expect(await foreignDevices({ ownerOf }, 'acme', ['a-1', 'g-1', 'a-2', 'nobody'])).to.deep.equal([1, 3]);
    expect(await foreignDevices({ ownerOf }, 'acme', ['a-2', 'a-1'])).to.deep.equal([]);
  });

  it("When default's pool names a device nobody has, then it is default's (linked or not); another workspace's is foreign", async () => {
    expect(await foreignDevices({ ownerOf }, 'default', ['nobody', 'later', 'a-1'])).to.deep.equal([2]);
  });
});
