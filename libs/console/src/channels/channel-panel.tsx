import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Message } from '../kit/api';
import { useAction } from '../kit/action';
import { Banner, Confirm, Empty, NoticeBanner, Spinner } from '../kit/ui';
import { PostTable, type PostStats } from './channel-posts';
import { useCanChange } from '../kit/session';

/** A channel as GET /channels/:id answers it. */
export interface Channel {
  id: string;
  name: string;
  description: string;
  inviteLink?: string;
  followers: number;
  role: 'owner' | 'admin' | 'follower' | 'guest';
  createdAt?: string;
  verified: boolean;
}

const ROLE: Record<Channel['role'], string> = {
  owner: 'Owner',
  admin: 'Admin',
  follower: 'Follower',
  guest: 'Not following',
};

/**
 * A channel's name and description fields (WhatsApp's limits: 100 and 2048 characters), for the
 * Create form (device-channels.tsx, where the description is `optional`) and the Edit form below.
 */
export const channelFields = (
  name: string,
  onName: (name: string) => void,
  description: string,
  onDescription: (description: string) => void,
  optional = false,
) => (
  <>
    <label>
      Name
      <input value={name} maxLength={100} dir="auto" onInput={(e) => onName(e.currentTarget.value)} />
    </label>
    <label>
      {optional ? 'Description (optional)' : 'Description'}
      <textarea
        rows={2}
        maxLength={2048}
        dir="auto"
        value={description}
        onInput={(e) => onDescription(e.currentTarget.value)}
      />
    </label>
  </>
);

/**
 * One channel of the device: what WhatsApp says of it (GET …/channels/:id), its edit and delete
 * (owner), a post to it (owner: text, or a picture by URL with a caption) and its latest posts
 * with their views and reactions (GET …/channels/:id/posts); a post the gateway sent shows its text
 * (its message record) and is edited or deleted through the queue.
 */
export function ChannelPanel(props: {
  deviceId: string;
  channelId: string;
  onChanged: () => void;
  onDeleted: () => void;
}) {
  const can = useCanChange();
  const path = `/devices/${encodeURIComponent(props.deviceId)}/channels/${encodeURIComponent(props.channelId)}`;
  const [channel, setChannel] = useState<Channel | undefined>(undefined);
  const [posts, setPosts] = useState<PostStats[] | undefined>(undefined);
  const [texts, setTexts] = useState<Record<string, string>>({});
  const asked = useRef(new Set<string>());
  const [error, setError] = useState<string | undefined>(undefined);
  const { busy, notice, setNotice, act: run } = useAction((failure, err) => `${failure}: ${err.message}`);
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [text, setText] = useState('');
  const [imageUrl, setImageUrl] = useState('');
  const [confirm, setConfirm] = useState<{ post?: PostStats } | undefined>(undefined);
  const [editPost, setEditPost] = useState<{ messageId: string; text: string } | undefined>(undefined);

  const loadPosts = async () => {
    const r = await api<{ data: { posts: PostStats[] } }>(`${path}/posts`);
    setPosts(r.data.posts);
    for (const p of r.data.posts) {
      if (!p.messageId || asked.current.has(p.messageId)) continue;
      const id = p.messageId;
      asked.current.add(id);
      api<{ message: Message }>(`/devices/${encodeURIComponent(props.deviceId)}/messages/${id}`)
        .then((m) =>
          setTexts((old) => ({ ...old, [id]: m.message.text ?? m.message.attachment?.caption ?? '' })),
        )
        .catch(() => undefined);
    }
  };
  const load = async () => {
    try {
      const r = await api<{ data: { channel: Channel } }>(path);
      setChannel(r.data.channel);
      setName(r.data.channel.name);
      setDescription(r.data.channel.description);
      setError(undefined);
      await loadPosts();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  useEffect(() => {
    void load();
  }, [path]);
  // A post is queued, not yet in the channel: its list is read again a few times meanwhile.
  const [posted, setPosted] = useState(0);
  useEffect(() => {
    if (!posted) return;
    const timers = [2000, 5000, 10_000, 20_000].map((ms) =>
      setTimeout(() => void loadPosts().catch(() => undefined), ms),
    );
    return () => timers.forEach(clearTimeout);
  }, [posted]);

  // Said at once; the buttons wait for the channel to be read again.
  const act = (work: () => Promise<string>, failure: string, reload = true) =>
    run(async () => {
      setNotice({ kind: 'success', text: await work() });
      if (reload) await load();
      return undefined;
    }, failure);
  const save = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      await api(path, { method: 'PATCH', json: { name: name.trim(), description } });
      setEditing(false);
      props.onChanged();
      return 'Channel saved.';
    }, 'Could not save the channel');
  };
  const post = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const url = imageUrl.trim();
      const json = url
        ? { attachment: { type: 'image', url, ...(text.trim() ? { caption: text.trim() } : {}) } }
        : { text: text.trim() };
      await api(`${path}/posts`, { json });
      setText('');
      setImageUrl('');
      setPosted((n) => n + 1);
      return 'Post queued: it shows below once WhatsApp has it.';
    }, 'Could not post');
  };
  const saveEdit = (e: Event) => {
    e.preventDefault();
    const edit = editPost;
    if (!edit) return;
    void act(
      async () => {
        await api(`${path}/posts/${edit.messageId}`, { method: 'PATCH', json: { text: edit.text } });
        setEditPost(undefined);
        setTexts((old) => ({ ...old, [edit.messageId]: edit.text }));
        setPosted((n) => n + 1);
        return 'Edit queued: the channel shows the new text once it is sent.';
      },
      'Could not edit the post',
      false,
    );
  };
  const confirmed = () => {
    const what = confirm;
    setConfirm(undefined);
    if (!what) return;
    if (what.post?.messageId) {
      const id = what.post.messageId;
      void act(async () => {
        await api(`${path}/posts/${id}`, { method: 'DELETE' });
        return 'Post deleted (its revoke goes through the queue).';
      }, 'Could not delete the post');
      return;
    }
    void act(
      async () => {
        await api(path, { method: 'DELETE' });
        props.onDeleted();
        return 'Channel deleted.';
      },
      'Could not delete the channel',
      false,
    );
  };

  const owner = channel?.role === 'owner' || channel?.role === 'admin';
  // What the account may do as the channel's owner, if the console's role may change things.
  const manage = owner && can;
  return (
    <section class="card channel-panel" aria-labelledby="channel-panel-title" data-testid="channel-panel">
      <h2 id="channel-panel-title">
        <bdi>{channel?.name ?? props.channelId}</bdi>
      </h2>
      {error && <Banner kind="error">{error}</Banner>}
      <NoticeBanner notice={notice} />
      {!channel && !error && <Spinner label="Asking WhatsApp about the channel…" />}
      {channel && (
        <>
          <div class="facts">
            <div>
              <span class="muted small">Role</span>
              <div>{ROLE[channel.role]}</div>
            </div>
            <div>
              <span class="muted small">Followers</span>
              <div data-testid="channel-followers">{channel.followers}</div>
            </div>
            <div>
              <span class="muted small">Id</span>
              <div class="mono wrap">{channel.id}</div>
            </div>
            {channel.inviteLink && (
              <div>
                <span class="muted small">Invite link</span>
                <div class="mono wrap">{channel.inviteLink}</div>
              </div>
            )}
          </div>
          {channel.description && (
            <p dir="auto" class="channel-description">
              {channel.description}
            </p>
          )}
          {manage && !editing && (
            <div class="actions">
              <button type="button" class="secondary" onClick={() => setEditing(true)}>
                Edit channel
              </button>
              {channel.role === 'owner' && (
                <button type="button" class="danger-outline" disabled={busy} onClick={() => setConfirm({})}>
                  Delete channel
                </button>
              )}
            </div>
          )}
          {editing && (
            <form onSubmit={save} class="channel-edit">
              {channelFields(name, setName, description, setDescription)}
              <div class="actions">
                <button type="submit" class="primary" disabled={busy || !name.trim()}>
                  Save channel
                </button>
                <button type="button" class="secondary" onClick={() => setEditing(false)}>
                  Cancel
                </button>
              </div>
            </form>
          )}
          {manage && (
            <form onSubmit={post} class="channel-post-form" aria-labelledby="channel-post-title">
              <h3 id="channel-post-title">Post to the channel</h3>
              <label>
                {imageUrl.trim() ? 'Caption (optional)' : 'Text'}
                <textarea rows={3} dir="auto" value={text} onInput={(e) => setText(e.currentTarget.value)} />
              </label>
              <label>
                Picture URL (optional)
                <input
                  type="url"
                  value={imageUrl}
                  placeholder="https://example.com/offer.jpg"
                  onInput={(e) => setImageUrl(e.currentTarget.value)}
                />
              </label>
              <div class="actions">
                <button type="submit" class="primary" disabled={busy || (!text.trim() && !imageUrl.trim())}>
                  Post
                </button>
              </div>
            </form>
          )}
          <h3>Latest posts</h3>
          {!posts ? (
            <Spinner label="Loading the posts…" />
          ) : posts.length === 0 ? (
            <Empty>
              {manage ? 'No post yet: write the first one above.' : 'The channel has no post yet.'}
            </Empty>
          ) : (
            <PostTable
              posts={posts}
              texts={texts}
              owner={manage}
              busy={busy}
              editPost={editPost}
              setEditPost={setEditPost}
              onSaveEdit={saveEdit}
              onDelete={(p) => setConfirm({ post: p })}
            />
          )}
          <div class="actions">
            <button type="button" class="link" onClick={() => void load()}>
              Refresh
            </button>
          </div>
        </>
      )}
      {confirm && (
        <Confirm
          title={confirm.post ? 'Delete this post?' : `Delete ${channel?.name ?? 'the channel'}?`}
          confirmLabel={confirm.post ? 'Delete post' : 'Delete channel'}
          onConfirm={confirmed}
          onCancel={() => setConfirm(undefined)}
        >
          {confirm.post
            ? 'It is taken back from every reader of the channel.'
            : 'The channel is gone for every follower, with all its posts. This cannot be undone.'}
        </Confirm>
      )}
    </section>
  );
}
