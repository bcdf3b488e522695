import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.kafka.common.utils.internals.Exit;

/**
 * Kafka's command-line tools run one after another in this one JVM, so that a test pays for
 * starting Kafka's classes once instead of once per command (tests/realkafka/jvm.py).
 *
 * It connects to the port given as its argument on 127.0.0.1 and reads requests there, each
 * frame a kind byte and a length-prefixed payload: 'M' main class, 'A' one argument, 'I' the
 * stdin bytes, 'G' run. While the tool runs, 'O' and 'E' frames carry its stdout and stderr as
 * they are written (so a hung call still shows what it printed), then 'X' its exit code.
 *
 * A fresh JVM is imitated where the tools can tell: Exit.exit/halt (the tools' only way out:
 * none of the tools the tests run calls System.exit) end the call with their status instead
 * of the JVM; the shutdown hooks a tool registers through Exit.addShutdownHook run when its
 * call ends, as they would at JVM exit; when main returns, the call waits for the non-daemon
 * threads it started, as the JVM would before exiting; an exception out of main prints as
 * the JVM's launcher prints it, with status 1. System.out and System.err are set once, before
 * any tool or Log4j captures them, to streams that forward to the running call. A stack trace
 * printed in a call shows no frames of this class below the tool's main (main is called
 * through a method handle, whose frames Java hides), and its "... n more" lines count as in
 * a fresh JVM, where nothing is below main.
 */
public final class ToolServer {
    private static final long THREAD_WAIT_MS = 30_000;

    /** Thrown by the exit and halt procedures to unwind the tool's main. */
    private static final class ExitCalled extends RuntimeException {
        ExitCalled() {
            super(null, null, false, false);
        }
    }

    /** One call's stdout or stderr, sent line by line as KIND frames (see fresh()). */
    private static final class Forward extends OutputStream {
        private static final Pattern MORE = Pattern.compile("(\\t+)\\.\\.\\. (\\d+) more");
        private final byte kind;
        private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
        private int below;  // frames of ours dropped from the stack trace being printed

        Forward(byte kind) {
            this.kind = kind;
        }

        @Override
        public synchronized void write(int b) throws IOException {
            line.write(b);
            if (b == '\n')
                flush();
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) throws IOException {
            for (int i = off; i < off + len; i++)
                write(b[i]);
        }

        /** Forgets a partial line written between calls (by a thread a tool left behind). */
        synchronized void discard() {
            line.reset();
            below = 0;
        }

        /** Sends what is buffered (a whole line, or the rest at the end of a call). */
        @Override
        public synchronized void flush() throws IOException {
            byte[] bytes = fresh(line.toByteArray());
            line.reset();
            if (bytes.length > 0)
                send(kind, bytes, 0, bytes.length);
        }

        /** A line as a fresh JVM prints it: "\tat ToolServer..." frames (below the tool's
         * main, or under a hook) dropped; "\t... n more" (frames in common with the enclosing
         * trace, ours among them) less the frames dropped, or gone when none are left. */
        private byte[] fresh(byte[] bytes) {
            String text = new String(bytes, StandardCharsets.ISO_8859_1);
            if (text.startsWith("\tat ToolServer")) {
                below++;
                return new byte[0];
            }
            Matcher more = MORE.matcher(text.stripTrailing());
            if (below > 0 && more.matches()) {
                int left = Integer.parseInt(more.group(2)) - below;
                return left <= 0 ? new byte[0]
                        : (more.group(1) + "... " + left + " more" + System.lineSeparator())
                              .getBytes(StandardCharsets.ISO_8859_1);
            }
            if (!text.startsWith("\t") && !text.startsWith("Caused by: "))
                below = 0;  // a line that is no part of a stack trace
            return bytes;
        }
    }

    /** A shutdown hook's thread: it may print after Exit.exit, as at JVM exit. */
    private static final class HookThread extends Thread {
        HookThread(String name, Runnable hook) {
            super(() -> {
                try {
                    hook.run();
                } catch (ExitCalled ignored) { }
            }, name != null ? name : "shutdown-hook");
        }
    }

    private static DataOutputStream out;
    private static volatile boolean running;
    private static volatile Integer exitStatus;
    private static final List<Thread> HOOKS = new ArrayList<>();
    private static Forward stdout;
    private static Forward stderr;

    static synchronized void send(byte kind, byte[] b, int off, int len) throws IOException {
        // Output between calls (a thread a tool left behind) has no call to go to, and after
        // Exit.exit only the shutdown hooks still run in a fresh JVM: the tool's catch and
        // finally blocks that unwind behind ExitCalled print nothing.
        boolean hook = Thread.currentThread() instanceof HookThread;
        if (kind != 'X' && (!running || (exitStatus != null && !hook)))
            return;
        out.writeByte(kind);
        out.writeInt(len);
        out.write(b, off, len);
        out.flush();
    }

    public static void main(String[] args) throws Exception {
        InputStream lifeline = new FileInputStream(FileDescriptor.in);
        // The test process holds our stdin: when it goes (even killed), so do we.
        Thread watch = new Thread(() -> {
            try {
                while (lifeline.read() >= 0) { }
            } catch (IOException ignored) { }
            Runtime.getRuntime().halt(0);
        }, "lifeline");
        watch.setDaemon(true);
        watch.start();

        // The charset a fresh JVM's System.out uses when it is a pipe.
        Charset charset = Charset.defaultCharset();
        stdout = new Forward((byte) 'O');
        stderr = new Forward((byte) 'E');
        System.setOut(new PrintStream(stdout, true, charset));
        System.setErr(new PrintStream(stderr, true, charset));
        Exit.setExitProcedure((status, message) -> exit(status));
        Exit.setHaltProcedure((status, message) -> exit(status));
        Exit.setShutdownHookAdder((name, hook) -> {
            synchronized (HOOKS) {
                HOOKS.add(new HookThread(name, hook));
            }
        });

        Socket socket = new Socket(InetAddress.getLoopbackAddress(), Integer.parseInt(args[0]));
        socket.setTcpNoDelay(true);
        out = new DataOutputStream(socket.getOutputStream());
        DataInputStream in = new DataInputStream(socket.getInputStream());
        String mainClass = null;
        List<String> toolArgs = new ArrayList<>();
        byte[] stdin = new byte[0];
        while (true) {
            int kind;
            try {
                kind = in.readByte();
            } catch (IOException closed) {
                Runtime.getRuntime().halt(0);
                return;
            }
            byte[] payload = new byte[in.readInt()];
            in.readFully(payload);
            switch (kind) {
                case 'M' -> mainClass = new String(payload, "UTF-8");
                case 'A' -> toolArgs.add(new String(payload, "UTF-8"));
                case 'I' -> stdin = payload;
                case 'G' -> {
                    int status = call(mainClass, toolArgs.toArray(new String[0]), stdin);
                    byte[] code = Integer.toString(status).getBytes("UTF-8");
                    send((byte) 'X', code, 0, code.length);
                    toolArgs.clear();
                    stdin = new byte[0];
                }
                default -> throw new IOException("unknown frame " + kind);
            }
        }
    }

    private static void exit(int status) {
        synchronized (ToolServer.class) {
            if (exitStatus == null)
                exitStatus = status;
        }
        throw new ExitCalled();
    }

    private static int call(String mainClass, String[] args, byte[] stdin) throws IOException {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        exitStatus = null;
        synchronized (HOOKS) {
            HOOKS.clear();
        }
        System.setIn(new ByteArrayInputStream(stdin));
        stdout.discard();
        stderr.discard();
        running = true;
        int status = 0;
        try {
            MethodHandle main;
            try {
                main = MethodHandles.publicLookup().findStatic(Class.forName(mainClass), "main",
                        MethodType.methodType(void.class, String[].class));
            } catch (ReflectiveOperationException e) {
                System.err.println("Error: Could not find or load main class " + mainClass);
                return 1;
            }
            try {
                main.invokeExact(args);
                awaitNewThreads(before);
            } catch (ExitCalled exited) {
                // the status is in exitStatus
            } catch (Throwable e) {
                if (exitStatus == null) {
                    System.err.print("Exception in thread \"main\" ");
                    e.printStackTrace();
                    status = 1;
                }
            }
            Integer exited = exitStatus;
            if (exited != null)
                status = exited;
            runHooks();
        } finally {
            System.out.flush();
            System.err.flush();
            stdout.flush();
            stderr.flush();
            running = false;
        }
        return status;
    }

    /** What the JVM does before it exits after main returns: wait for non-daemon threads. */
    private static void awaitNewThreads(Set<Thread> before) {
        long deadline = System.currentTimeMillis() + THREAD_WAIT_MS;
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (before.contains(thread) || thread.isDaemon() || thread == Thread.currentThread())
                continue;
            try {
                thread.join(Math.max(1, deadline - System.currentTimeMillis()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The hooks the tool registered, run concurrently as the JVM's shutdown runs them. */
    private static void runHooks() {
        List<Thread> threads;
        synchronized (HOOKS) {
            threads = new ArrayList<>(HOOKS);
            HOOKS.clear();
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            try {
                thread.join(THREAD_WAIT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
